import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page, Request } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  axeSource,
  chromiumInstalled,
  launchChromium,
  seriousViolations,
  watchPage,
} from '../helpers/browser.js'
import { call } from '../helpers/http.js'
import { type RunningServer, startServer } from '../helpers/process.js'
import { startUpstreamDouble, type UpstreamDouble } from '../helpers/upstream-double.js'

/**
 * The console in a real browser (Debian's Chromium through playwright-core) against a spawned
 * server, doing what a new user does: sign in with the key, create an application and a policy,
 * read a validation error at its field, lose a race with another editor, compare revisions, run
 * the playground, save a test, run the tests, read the log and keep a rule's detector through an
 * edit. Then every page at 1280 and 390 pixels: a screenshot in test-results/console/, no script
 * or CSP error, no failed request, a non-empty main landmark, and no serious or critical axe-core
 * violation.
 */

const KEY = 'wdn_console_test_admin_key_0123456789abcdef'
const SHOTS = join(process.cwd(), 'test-results', 'console')
const WIDTHS = [1280, 390] as const
const CARD = '4111 1111 1111 1111'

const haveChromium = chromiumInstalled()

describe.skipIf(!haveChromium)('the web console, in Chromium', () => {
  let dir: string
  let server: RunningServer
  /** The model behind the application's provider, openai, for guarded chat completions. */
  let upstream: UpstreamDouble
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let watched: { problems: string[] }
  /** Set once the playground has evaluated something. */
  let evaluationId: string | null = null
  let testsAvailable = false
  let logAvailable = false

  const url = (path: string) => `${server.url}/console${path}`
  const h1 = (name: string | RegExp) => page.getByRole('heading', { level: 1, name })

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'warden-console-'))
    mkdirSync(SHOTS, { recursive: true })
    upstream = await startUpstreamDouble()
    server = await startServer({
      DATABASE_URL: `sqlite:${join(dir, 'warden.db')}`,
      WARDEN_ADMIN_KEY: KEY,
      RATE_LIMIT_PER_MINUTE: '0',
      PROVIDER_OPENAI_BASE_URL: upstream.baseUrl,
    })
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    page = await context.newPage()
    // Generous: CI runs this tier beside the others on two cores.
    page.setDefaultTimeout(20_000)
    watched = watchPage(page)
  })

  afterEach(() => {
    // Every test leaves the page without a script error, a CSP refusal or a failed request.
    expect(watched.problems).toEqual([])
  })

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    await upstream?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('is served at /console with a strict Content-Security-Policy, deep links included', async () => {
    for (const path of ['/console', '/console/applications/anything/playground']) {
      const res = await fetch(`${server.url}${path}`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^text\/html/)
      const csp = res.headers.get('content-security-policy') ?? ''
      for (const directive of [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "img-src 'self' data:",
        "frame-ancestors 'none'",
      ]) {
        expect(csp).toContain(directive)
      }
      expect(csp).not.toContain('unsafe-inline')
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      const html = await res.text()
      expect(html).toContain('<div id="app">')
      // No inline script and nothing from another origin.
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
      expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//)
    }
    const missing = await fetch(`${server.url}/console/assets/no-such-file.js`)
    expect(missing.status).toBe(404)
    expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: object }
    expect(Object.keys(openapi.paths).filter((p) => p.startsWith('/console'))).toEqual([])
  })

  it('signs in with an API key kept in sessionStorage only, and refuses a wrong one', async () => {
    await page.goto(url('/'))
    await h1('Sign in to Warden').waitFor()
    expect(new URL(page.url()).pathname).toBe('/console/sign-in')

    await page.getByLabel('API key').fill('wdn_not_a_real_key_at_all_000000000000000')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByText('The server refused this key').waitFor()
    expect(await page.getByText('You were signed out').count()).toBe(0)

    // By keyboard alone: the skip link first, then the key field, then Enter.
    await page.reload()
    await h1('Sign in to Warden').waitFor()
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe(
      'Skip to content',
    )
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe('api-key')
    await page.keyboard.type(KEY)
    await page.keyboard.press('Enter')
    await h1('Applications').waitFor()
    const storage = await page.evaluate(() => ({
      session: (globalThis as any).sessionStorage.getItem('warden.apiKey'),
      local: (globalThis as any).localStorage.length,
    }))
    expect(storage).toEqual({ session: KEY, local: 0 })
    expect(await context.cookies()).toEqual([])
  })

  it('creates an application, showing the API validation error beside its field until it is edited', async () => {
    await page.getByRole('button', { name: 'New application' }).click()
    await page.getByLabel('Id (optional)').fill('support-bot')
    await page.getByLabel('Name', { exact: true }).fill('Support bot')
    await page.getByLabel('Description').fill('Answers questions about orders and returns.')
    await page.getByLabel('Provider').fill('openai')
    await page.getByLabel('Model').fill('gpt-4o')
    await page.getByLabel('Temperature').fill('5')
    await page.getByRole('button', { name: 'Create application' }).click()

    const error = page.locator('[data-error-for="/parameters/temperature"]')
    await error.waitFor()
    expect(await error.textContent()).toMatch(/at most 2/)
    expect(await page.getByLabel('Temperature').getAttribute('aria-invalid')).toBe('true')
    // The summary names the pointer too.
    expect(await page.getByRole('alert').first().textContent()).toContain('/parameters/temperature')

    // Filled in again, the field loses its message before the next submit; the summary keeps
    // what the server said until then.
    await page.getByLabel('Temperature').fill('0.2')
    await error.waitFor({ state: 'detached' })
    expect(await page.getByLabel('Temperature').getAttribute('aria-invalid')).toBe('false')
    expect(await page.getByRole('alert').first().textContent()).toContain('/parameters/temperature')
    await page.getByRole('button', { name: 'Create application' }).click()
    await h1('Support bot').waitFor()
    expect(new URL(page.url()).pathname).toBe('/console/applications/support-bot')
  })

  it('asks for a new policy’s id before sending it, and shows the API’s error at that field', async () => {
    await page.getByRole('link', { name: 'New policy' }).click()
    await h1('New policy').waitFor()
    const sent: string[] = []
    const track = (request: Request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname.endsWith('/policies'))
        sent.push(request.url())
    }
    page.on('request', track)
    try {
      const id = page.getByLabel('Policy id')
      expect(await id.getAttribute('required')).not.toBeNull()
      await page.getByRole('button', { name: 'Create policy' }).click()
      const error = page.locator('[data-error-for="/id"]')
      await error.waitFor()
      expect(await error.textContent()).toContain('is required')
      expect(await id.getAttribute('aria-invalid')).toBe('true')
      const summary = await page.getByRole('alert').first().textContent()
      expect(summary).toContain('Fix the fields marked below.')
      expect(summary).toContain('/id')
      expect(sent).toEqual([])

      // An id the API refuses: its own error, at the same field.
      await id.fill('no pii')
      await page.getByRole('button', { name: 'Create policy' }).click()
      await page.locator('[data-error-for="/id"]', { hasText: 'must' }).waitFor()
      expect(await page.getByRole('alert').first().textContent()).toContain('The server did not accept this.')
      expect(sent).toHaveLength(1)
    } finally {
      page.off('request', track)
    }
  })

  it('creates a policy, with a missing regex pattern reported at that rule’s field', async () => {
    await page.getByLabel('Policy id').fill('no-pii')
    // Rules are numbered as the API numbers them, from 0.
    await page.getByLabel('Rule 0 type').selectOption('pii')
    await page.getByRole('button', { name: 'Add a rule' }).click()
    await page.getByLabel('Rule 1 type').selectOption('regex')
    await page.getByRole('button', { name: 'Create policy' }).click()

    const error = page.locator('[data-error-for="/rules/1/value"]')
    await error.waitFor()
    expect((await error.textContent())?.length).toBeGreaterThan(3)
    expect(await page.getByLabel('Rule 1 pattern (re2)').getAttribute('aria-invalid')).toBe('true')
    const second = page.locator('.rule-list > li').nth(1)
    expect(await second.locator('h3').textContent()).toBe('Rule 1')
    expect(await second.locator('[data-error-for="/rules/1/value"]').count()).toBe(1)

    await page.getByLabel('Rule 1 pattern (re2)').fill('\\bsecret\\b')
    await page.getByRole('button', { name: 'Create policy' }).click()
    await h1('Policy no-pii').waitFor()
    await page.getByText('Policy created as revision 1.').waitFor()
  })

  it('says clearly when someone else changed the policy, and never overwrites it unseen', async () => {
    await page.getByLabel('Override response').fill('Sorry, I cannot share that.')
    // Another editor changes the policy through the API behind the page's back.
    const other = await call(`${server.url}/v1/applications/support-bot/policies/no-pii`, 'PATCH', KEY, {
      definition: 'Replies never reveal payment details.',
    })
    expect(other.status).toBe(200)
    expect(other.body.revision).toBe(2)

    await page.getByRole('button', { name: 'Save policy' }).click()
    const stale = page.locator('.alert.stale')
    await stale.waitFor()
    expect(await stale.textContent()).toContain('Someone else changed this policy since you opened it.')
    const current = await call(`${server.url}/v1/applications/support-bot/policies/no-pii`, 'GET', KEY)
    expect(current.body.override_response).toBeNull()

    await page.getByRole('button', { name: 'Load the latest version' }).click()
    await page.getByText('Revision 2 ·').waitFor()
    expect(await page.getByLabel('Definition').inputValue()).toBe('Replies never reveal payment details.')
    await page.getByLabel('Override response').fill('Sorry, I cannot share that.')
    await page.getByRole('button', { name: 'Save policy' }).click()
    await page.getByText('Saved as revision 3.').waitFor()
  })

  it('compares any two revisions side by side', async () => {
    await page.getByRole('link', { name: 'Revisions', exact: true }).click()
    await h1('Revisions of no-pii').waitFor()
    await page.locator('table.revisions tbody tr').nth(2).waitFor()
    expect(await page.locator('table.revisions tbody tr').count()).toBe(3)
    await page.getByLabel('Older (left)').selectOption('1')
    await page.getByLabel('Newer (right)').selectOption('3')
    await page.getByText('between revision 1 and revision 3').waitFor()
    const added = await page.locator('table.diff td.ins').allTextContents()
    expect(added.join('\n')).toContain('"definition": "Replies never reveal payment details."')
    expect(added.join('\n')).toContain('"override_response": "Sorry, I cannot share that."')
    const removed = await page.locator('table.diff td.del').allTextContents()
    expect(removed.join('\n')).toContain('"definition": null')

    await page.getByLabel('Older (left)').selectOption('2')
    await page.getByText('between revision 2 and revision 3').waitFor()
  })

  it('runs the playground and highlights the card number at its code point offsets', async () => {
    await page.getByRole('link', { name: 'no-pii' }).first().click()
    await page.getByRole('link', { name: 'Try in the playground' }).click()
    await h1('Playground').waitFor()
    // An emoji first: the API counts it as one code point, JavaScript as two UTF-16 units.
    await page.getByLabel('Message 2 text').fill(`😀 My card is ${CARD}, can I get a refund?`)
    await page.getByRole('button', { name: 'Run evaluation' }).click()
    await page.getByRole('heading', { name: 'Result' }).waitFor()

    const marks = page.locator('mark.finding')
    expect(await marks.count()).toBe(1)
    expect(await marks.first().textContent()).toBe(CARD)
    expect(await marks.first().getAttribute('data-kind')).toBe('credit_card')
    const outcome = await page.locator('dl.outcome').textContent()
    expect(outcome).toContain('fail')
    expect(outcome).toContain('override')
    const rulesRegion = page.getByRole('region', { name: 'Rules of policy no-pii' })
    const rules = await rulesRegion.textContent()
    expect(rules).toContain('pii')
    expect(rules).toContain('detector')
    // The API's rule indexes, from 0: the card is rule 0's finding.
    expect(await rulesRegion.locator('tbody tr td:first-child').allTextContents()).toEqual(['0', '1'])
    expect(await marks.first().getAttribute('title')).toBe('credit_card (policy no-pii, rule 0)')
    expect(await page.locator('.override').textContent()).toContain('Sorry, I cannot share that.')
    evaluationId = await page.locator('dl.outcome code').textContent()
    expect(evaluationId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('saves the playground run as a test case of the policy', async () => {
    await page.getByLabel('Test name').fill('card numbers are caught')
    await page.getByRole('button', { name: 'Save as test case' }).click()
    const outcome = page.locator('.save-test .alert')
    await outcome.first().waitFor()
    // The server has policy tests: a page saying otherwise is a failure, not a reason to skip.
    expect(await page.locator('.save-test .not-available').count()).toBe(0)
    await page.getByText('Test case saved.').waitFor()
    testsAvailable = true
  })

  it('runs the policy tests', async () => {
    await page.goto(url('/applications/support-bot/policies/no-pii/tests'))
    await h1('Tests of no-pii').waitFor()
    await page.locator('.not-available, table, .empty').first().waitFor()
    expect(await page.locator('.not-available').count()).toBe(0)
    expect(testsAvailable).toBe(true)
    expect(await page.locator('.test-name').allTextContents()).toEqual(['card numbers are caught'])
    await page.getByRole('button', { name: 'Run all tests' }).click()
    const summary = page.locator('.run-summary')
    await summary.waitFor()
    expect(await summary.textContent()).toContain('1 passed')
    const table = await page.getByRole('region', { name: 'Test cases' }).textContent()
    expect(table).toContain('rule 0: fail')
    expect(table).toContain('rule 1: pass')
  })

  it('reads the evaluation log: the chart, the list with each entry’s source, and one entry', async () => {
    // A guarded chat completion: its input and its output are checked, and logged as such.
    const chat = await call(`${server.url}/v1/applications/support-bot/chat/completions`, 'POST', KEY, {
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Where is my order?' }],
    })
    expect(chat.status).toBe(200)

    await page.goto(url('/applications/support-bot/evaluations'))
    await h1('Evaluation log').waitFor()
    await page.locator('.not-available, table, .empty').first().waitFor()
    expect(await page.locator('.not-available').count()).toBe(0)
    logAvailable = true
    await page.locator('figure.chart svg').waitFor()
    expect(await page.locator('figure.chart svg').getAttribute('aria-label')).toMatch(/1 failed/)
    const log = page.getByRole('region', { name: 'Evaluations' })
    const rows = log.locator('tbody tr')
    await rows.nth(2).waitFor()
    expect(await log.locator('thead th').nth(1).textContent()).toBe('Source')
    // Newest first: the reply's check, the conversation's, then the playground's run.
    expect(await rows.locator('td.source').allTextContents()).toEqual([
      'chat_output',
      'chat_input',
      'playground',
    ])
    await page.getByLabel('Source').selectOption('chat_input')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    await expect.poll(() => rows.locator('td.source').allTextContents()).toEqual(['chat_input'])
    await page.getByLabel('Source').selectOption('')
    await page.getByLabel('Verdict').selectOption('fail')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    await expect.poll(() => rows.locator('td.source').allTextContents()).toEqual(['playground'])
    await page.getByLabel('Until').fill('2001-01-01T00:00')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    await page.getByText('No evaluations match').waitFor()
    await page.getByRole('button', { name: 'Clear' }).click()
    await rows.nth(2).waitFor()
    await rows
      .filter({ has: page.locator('td.source', { hasText: /^playground$/ }) })
      .locator('a')
      .click()
    await h1(/^Evaluation /).waitFor()
    expect(await page.locator('.evaluation dl.outcome').textContent()).toContain('fail')
    expect(await page.locator('main dl.outcome').first().textContent()).toContain('Asked byplayground')
  })

  it('manages API keys: creates one with its scopes, shows its secret once, and revokes it after a confirmation', async () => {
    await page.goto(url('/applications'))
    await h1('Applications').waitFor()
    await page.getByRole('link', { name: 'API keys' }).click()
    await h1('API keys').waitFor()
    const rows = page.getByRole('region', { name: 'API keys' }).locator('tbody tr')
    await rows.first().waitFor()
    // The admin key this tab signed in with is marked as such.
    expect(await rows.filter({ hasText: "this tab's key" }).count()).toBe(1)

    // What the form can tell before sending, at the fields; each message goes once its field is edited.
    await page.getByRole('button', { name: 'Create key' }).click()
    const nameError = page.locator('[data-error-for="/name"]')
    const scopesError = page.locator('[data-error-for="/scopes"]')
    await nameError.waitFor()
    await scopesError.waitFor()
    await page.getByLabel('Name').fill('ci-reader')
    await nameError.waitFor({ state: 'detached' })
    await page.getByLabel('applications:read').check()
    await page.getByLabel('evaluations:write').check()
    await scopesError.waitFor({ state: 'detached' })
    await page.getByRole('button', { name: 'Create key' }).click()

    const secretField = page.getByLabel('Secret')
    await secretField.waitFor()
    const secret = await secretField.inputValue()
    expect(secret).toMatch(/^wdn_[A-Za-z0-9_-]{43}$/)
    expect((await call(`${server.url}/v1/applications`, 'GET', secret)).status).toBe(200)
    // With exactly its scopes: no policies:write.
    expect(
      (await call(`${server.url}/v1/applications/support-bot/policies`, 'POST', secret, { id: 'x' })).status,
    ).toBe(403)
    const row = rows.filter({ hasText: 'ci-reader' })
    await row.waitFor()
    expect(await row.locator('td.scopes').textContent()).toBe('applications:read, evaluations:write')
    expect(await row.locator('td.state').textContent()).toBe('active')
    // Shown once: gone when dismissed, and nowhere after a reload.
    await page.getByRole('button', { name: 'Done, I have stored it' }).click()
    await secretField.waitFor({ state: 'detached' })
    await page.reload()
    await h1('API keys').waitFor()
    await row.waitFor()
    expect(await page.content()).not.toContain(secret)

    await page.getByRole('button', { name: 'Revoke key ci-reader' }).click()
    const dialog = page.getByRole('dialog', { name: 'Revoke key ci-reader?' })
    await dialog.waitFor()
    await dialog.getByRole('button', { name: 'Revoke key' }).click()
    await expect.poll(() => row.locator('td.state').textContent()).toBe('revoked')
    expect((await call(`${server.url}/v1/applications`, 'GET', secret)).status).toBe(401)
    expect(await row.getByRole('button', { name: /Revoke/ }).count()).toBe(0)
  })

  it('pages through the applications, and deletes one only after a confirmation', async () => {
    for (let i = 1; i <= 20; i++) {
      const id = `bot-${String(i).padStart(2, '0')}`
      const created = await call(`${server.url}/v1/applications`, 'POST', KEY, {
        id,
        name: `Bot ${i}`,
        description: '',
      })
      expect(created.status).toBe(201)
    }
    await page.goto(url('/applications'))
    await h1('Applications').waitFor()
    const rows = page.getByRole('region', { name: 'Applications' }).locator('tbody tr')
    await rows.nth(19).waitFor()
    expect(await rows.count()).toBe(20)
    await page.getByRole('button', { name: 'Next page' }).click()
    await page.getByText('Page 2').waitFor()
    await page.getByRole('link', { name: 'Bot 20' }).waitFor()
    expect(await rows.count()).toBe(1)
    await page.getByRole('button', { name: 'Previous page' }).click()
    await page.getByRole('link', { name: 'Support bot' }).waitFor()

    await page.getByRole('link', { name: 'Bot 1', exact: true }).click()
    await h1('Bot 1').waitFor()
    await page.getByRole('button', { name: 'Delete application' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete Bot 1?' })
    await dialog.waitFor()
    // Cancelling (here with the keyboard) deletes nothing.
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'hidden' })
    expect((await call(`${server.url}/v1/applications/bot-01`, 'GET', KEY)).status).toBe(200)

    await page.getByRole('button', { name: 'Delete application' }).click()
    await dialog.getByRole('button', { name: 'Delete for good' }).click()
    await h1('Applications').waitFor()
    expect((await call(`${server.url}/v1/applications/bot-01`, 'GET', KEY)).status).toBe(404)
  })

  it('keeps a rule’s detector through an edit, and sets it only on the rules that take one', async () => {
    // An application of its own, so the steps before count only theirs.
    const base = `${server.url}/v1/applications/screening`
    expect(
      (
        await call(`${server.url}/v1/applications`, 'POST', KEY, {
          id: 'screening',
          name: 'Screening',
          description: '',
        })
      ).status,
    ).toBe(201)
    const created = await call(`${base}/policies`, 'POST', KEY, {
      id: 'screen',
      target: ['input'],
      rules: [{ type: 'prompt_injection', detector: 'model' }, { type: 'toxicity' }, { type: 'pii' }],
    })
    expect(created.status).toBe(201)
    const rules = async () => (await call(`${base}/policies/screen`, 'GET', KEY)).body.rules

    await page.goto(url('/applications/screening/policies/screen'))
    await h1('Policy screen').waitFor()
    expect(await page.getByLabel('Rule 0 detector').inputValue()).toBe('model')
    expect(await page.getByLabel('Rule 1 detector').inputValue()).toBe('')
    expect(await page.getByLabel('Rule 2 detector').count()).toBe(0)
    // The form says what an unset detector means on this server (GET /v1/detectors): no judge here.
    await page.getByText('Unset: the offline model (this server has no judge configured).').first().waitFor()

    // Saving another field sends the detector back as it was.
    await page.getByLabel('Definition').fill('Screens what users send.')
    await page.getByRole('button', { name: 'Save policy' }).click()
    await page.getByText('Saved as revision 2.').waitFor()
    expect(await rules()).toEqual([
      expect.objectContaining({ type: 'prompt_injection', detector: 'model' }),
      expect.not.objectContaining({ detector: expect.anything() }),
      expect.not.objectContaining({ detector: expect.anything() }),
    ])

    await page.getByLabel('Rule 0 detector').selectOption('')
    await page.getByLabel('Rule 1 detector').selectOption('judge')
    await page.getByRole('button', { name: 'Save policy' }).click()
    await page.getByText('Saved as revision 3.').waitFor()
    const saved = await rules()
    expect(saved[0]).not.toHaveProperty('detector')
    expect(saved[1]).toMatchObject({ type: 'toxicity', detector: 'judge' })
    expect(saved[2]).not.toHaveProperty('detector')
  })

  it('renders every page at 1280 and 390 pixels without errors or serious accessibility violations', async () => {
    const app = '/applications/support-bot'
    const policy = `${app}/policies/no-pii`
    const pages: { name: string; path: string; prepare?: (p: Page) => Promise<void> }[] = [
      { name: 'applications', path: '/applications' },
      { name: 'application', path: app },
      { name: 'policy-new', path: `${app}/policies/new` },
      { name: 'policy-edit', path: policy },
      { name: 'revisions', path: `${policy}/revisions` },
      {
        name: 'tests',
        path: `${policy}/tests`,
        prepare: async (p) => {
          if (!testsAvailable) return
          await p.getByRole('button', { name: 'Run all tests' }).click()
          await p.locator('.run-summary').waitFor()
        },
      },
      {
        name: 'playground',
        path: `${app}/playground`,
        prepare: async (p) => {
          await p.getByRole('button', { name: 'Run evaluation' }).click()
          await p.getByRole('heading', { name: 'Result' }).waitFor()
        },
      },
      { name: 'evaluations', path: `${app}/evaluations` },
      { name: 'api-keys', path: '/api-keys' },
    ]
    if (logAvailable && evaluationId)
      pages.push({ name: 'evaluation', path: `${app}/evaluations/${evaluationId}` })

    // Pages are checked in two fresh tabs: one as users get it (the CSP enforced) for the
    // screenshots, one that lets Playwright inject axe-core past the CSP.
    const axeContext = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } })
    const shotsContext = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const axePage = await axeContext.newPage()
    const shotPage = await shotsContext.newPage()
    const shotProblems = watchPage(shotPage)
    const axe = axeSource()
    const findings: string[] = []

    const check = async (
      p: Page,
      name: string,
      path: string,
      width: number,
      prepare?: (p: Page) => Promise<void>,
    ) => {
      await p.setViewportSize({ width, height: 900 })
      await p.goto(url(path))
      await p.locator('main h1').waitFor()
      await p.locator('main .loading').first().waitFor({ state: 'detached' })
      if (prepare) await prepare(p)
      const main = (await p.locator('main').innerText()).trim()
      expect(main.length, `${name} at ${width}`).toBeGreaterThan(20)
      expect(main).not.toContain('Page not found')
      // Readable at this width: nothing makes the page itself scroll sideways.
      const overflow = await p.evaluate(() => {
        const d = (globalThis as any).document.documentElement
        return d.scrollWidth - d.clientWidth
      })
      expect(overflow, `${name} scrolls sideways at ${width}px`).toBeLessThanOrEqual(0)
    }

    const signIn = async (p: Page) => {
      await p.getByLabel('API key').fill(KEY)
      await p.getByRole('button', { name: 'Sign in' }).click()
      await p.getByRole('heading', { level: 1, name: 'Applications' }).waitFor()
    }

    for (const width of WIDTHS) {
      for (const [p, mode] of [
        [shotPage, 'shot'],
        [axePage, 'axe'],
      ] as const) {
        await p.setViewportSize({ width, height: 900 })
        await p.goto(url('/sign-in'))
        await p.getByRole('heading', { level: 1, name: 'Sign in to Warden' }).waitFor()
        if (mode === 'shot') await p.screenshot({ path: join(SHOTS, `sign-in-${width}.png`), fullPage: true })
        else {
          await p.addScriptTag({ content: axe })
          for (const v of await seriousViolations(p))
            findings.push(`sign-in@${width}: ${v.id} ${JSON.stringify(v.nodes)}`)
        }
        await signIn(p)
      }
      for (const { name, path, prepare } of pages) {
        await check(shotPage, name, path, width, prepare)
        await shotPage.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true })
        await check(axePage, name, path, width, prepare)
        await axePage.addScriptTag({ content: axe })
        for (const v of await seriousViolations(axePage)) {
          findings.push(`${name}@${width}: ${v.id} (${v.impact}) ${v.help} ${JSON.stringify(v.nodes)}`)
        }
      }
      // Sign out, so the next width starts at the sign-in page again.
      for (const p of [shotPage, axePage]) {
        await p.getByRole('button', { name: 'Sign out' }).click()
        await p.getByRole('heading', { level: 1, name: 'Sign in to Warden' }).waitFor()
        expect(await p.evaluate(() => (globalThis as any).sessionStorage.length)).toBe(0)
      }
    }
    await axeContext.close()
    await shotsContext.close()
    expect(shotProblems.problems).toEqual([])
    expect(findings).toEqual([])
  })
})

describe.runIf(!haveChromium)('the web console, without Chromium', () => {
  it('needs Chromium at /usr/bin/chromium (apt-get install chromium), or CHROMIUM_PATH', (ctx) => {
    // CI installs it (.ci/run): there, a missing browser is a failure, not a skip.
    if (process.env.CI !== 'true') ctx.skip('Chromium is not installed: the browser tests did not run')
    expect.fail('Chromium is not installed, so the console was not tested in a browser')
  })
})

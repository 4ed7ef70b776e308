import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
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

/**
 * Masking in the console (docs/masking.md), in Chromium against a spawned server: a mask rule
 * made with the policy form (its action, restore and allowed values, offered only on the rule
 * types that take them), a playground run that shows the masked conversation and its
 * placeholders, and the log entry, whose masked rule and placeholders stand apart and which holds
 * no masked value. The pages it reaches are checked at 1280 and 390 pixels like every other.
 */

const KEY = 'wdn_console_masking_admin_key_0123456789abc'
const SHOTS = join(process.cwd(), 'test-results', 'console')
const APP = 'support-bot'
const EMAIL = 'jane@example.com'
const SUPPORT = 'support@acme.example'
const CARD = '4111 1111 1111 1111'

const haveChromium = chromiumInstalled()

describe.skipIf(!haveChromium)('masking in the web console, in Chromium', () => {
  let dir: string
  let server: RunningServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let watched: { problems: string[] }
  let evaluationId = ''

  const url = (path: string) => `${server.url}/console${path}`
  const h1 = (name: string | RegExp) => page.getByRole('heading', { level: 1, name })

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'warden-console-masking-'))
    mkdirSync(SHOTS, { recursive: true })
    server = await startServer({
      DATABASE_URL: `sqlite:${join(dir, 'warden.db')}`,
      WARDEN_ADMIN_KEY: KEY,
      RATE_LIMIT_PER_MINUTE: '0',
    })
    const created = await call(`${server.url}/v1/applications`, 'POST', KEY, {
      id: APP,
      name: 'Support bot',
      description: '',
    })
    expect(created.status).toBe(201)
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    page = await context.newPage()
    // Generous: CI runs this tier beside the others on two cores.
    page.setDefaultTimeout(20_000)
    watched = watchPage(page)
    await page.goto(url('/sign-in'))
    await page.getByLabel('API key').fill(KEY)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await h1('Applications').waitFor()
  })

  afterEach(() => {
    expect(watched.problems).toEqual([])
  })

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('offers action, restore and allowed only on the rule types that take them', async () => {
    await page.goto(url(`/applications/${APP}/policies/new`))
    await h1('New policy').waitFor()
    // pii masks and has allowed values; restore appears once the action is mask.
    expect(await page.getByLabel('Rule 0 type').inputValue()).toBe('pii')
    expect(await page.getByLabel('Rule 0 action').inputValue()).toBe('block')
    expect(await page.getByLabel('Rule 0 restore').count()).toBe(0)
    await page.getByLabel('Rule 0 allowed values, one a line').waitFor()

    await page.getByRole('button', { name: 'Add a rule' }).click()
    const type = page.getByLabel('Rule 1 type')
    for (const [name, mask, allowed] of [
      ['keywords', true, true],
      ['regex', true, true],
      ['toxicity', false, true],
      ['prompt_injection', false, true],
      ['length', false, false],
      ['factuality', false, false],
      ['custom', false, false],
    ] as const) {
      await type.selectOption(name)
      expect(await page.getByLabel('Rule 1 action').count(), name).toBe(mask ? 1 : 0)
      expect(await page.getByLabel('Rule 1 allowed values, one a line').count(), name).toBe(allowed ? 1 : 0)
    }
    // What allowed values do, as the type reads them: neutral text for the scored types.
    await type.selectOption('toxicity')
    await page.getByText('read as neutral text before scoring').waitFor()
    await page.getByRole('button', { name: 'Remove rule 1' }).click()
    expect(await page.getByLabel('Rule 1 type').count()).toBe(0)
  })

  it('creates a mask rule with the form, the API’s error shown at the action until it is fixed', async () => {
    await page.getByLabel('Policy id').fill('mask-contact')
    await page.getByLabel('Rule 0 action').selectOption('mask')
    await page.getByLabel('Rule 0 restore').selectOption('false')
    await page.getByLabel('Rule 0 allowed values, one a line').fill(`${SUPPORT}\n\n`)
    // A rule that must find something cannot mask it: the API says so at /rules/0/action.
    await page.getByLabel('Rule 0 expected verdict').selectOption('fail')
    await page.getByRole('button', { name: 'Create policy' }).click()
    const error = page.locator('[data-error-for="/rules/0/action"]')
    await error.waitFor()
    expect(await error.textContent()).toContain('expected pass')
    expect(await page.getByLabel('Rule 0 action').getAttribute('aria-invalid')).toBe('true')

    await page.getByLabel('Rule 0 expected verdict').selectOption('pass')
    await page.getByRole('button', { name: 'Create policy' }).click()
    await h1('Policy mask-contact').waitFor()
    await page.getByText('Policy created as revision 1.').waitFor()
    const stored = await call(`${server.url}/v1/applications/${APP}/policies/mask-contact`, 'GET', KEY)
    expect(stored.body.rules).toEqual([
      {
        type: 'pii',
        expected: 'pass',
        value: null,
        threshold: null,
        flagged: null,
        action: 'mask',
        restore: false,
        allowed: [SUPPORT],
      },
    ])

    // Loaded again, the form shows them; saving another field sends them back as they were, and
    // setting restore back to yes leaves the field unset, as the API's default.
    await page.reload()
    await h1('Policy mask-contact').waitFor()
    expect(await page.getByLabel('Rule 0 action').inputValue()).toBe('mask')
    expect(await page.getByLabel('Rule 0 restore').inputValue()).toBe('false')
    expect(await page.getByLabel('Rule 0 allowed values, one a line').inputValue()).toBe(SUPPORT)
    await page.getByLabel('Override response').fill('Sorry, I cannot share that.')
    await page.getByRole('button', { name: 'Save policy' }).click()
    await page.getByText('Saved as revision 2.').waitFor()
    const saved = await call(`${server.url}/v1/applications/${APP}/policies/mask-contact`, 'GET', KEY)
    expect(saved.body.rules).toEqual(stored.body.rules)
    await page.getByLabel('Rule 0 restore').selectOption('true')
    await page.getByRole('button', { name: 'Save policy' }).click()
    await page.getByText('Saved as revision 3.').waitFor()
    const restored = await call(`${server.url}/v1/applications/${APP}/policies/mask-contact`, 'GET', KEY)
    expect(restored.body.rules[0]).toMatchObject({ action: 'mask', allowed: [SUPPORT] })
    expect(restored.body.rules[0]).not.toHaveProperty('restore')
  })

  it('runs the playground: the masked conversation, its placeholders, and the rule masked', async () => {
    await page.goto(url(`/applications/${APP}/playground`))
    await h1('Playground').waitFor()
    await page
      .getByLabel('Message 2 text')
      .fill(`😀 Mail ${EMAIL} or ${SUPPORT} about card ${CARD}, and ${EMAIL} again.`)
    await page.getByRole('button', { name: 'Run evaluation' }).click()
    await page.getByRole('heading', { name: 'Result' }).waitFor()

    const outcome = await page.locator('dl.outcome').textContent()
    expect(outcome).toContain('pass')
    expect(await page.locator('dl.outcome .badge-mask').textContent()).toBe('mask')

    // The conversation as sent: each finding of the mask rule marked as masked, at its code points
    // (after an emoji), and the allowed address not at all.
    const found = page.locator('#highlighted-heading + ol mark.finding')
    expect(await found.allTextContents()).toEqual([EMAIL, CARD, EMAIL])
    expect(await page.locator('#highlighted-heading + ol mark.finding.masked').count()).toBe(3)
    expect(await found.first().getAttribute('title')).toBe(
      'email (policy mask-contact, rule 0), masked as [EMAIL_1]',
    )

    // The conversation to send on, and what each placeholder stands for.
    const masked = page.locator('section.masked')
    await masked.getByRole('heading', { name: 'Masked conversation, as the model is to see it' }).waitFor()
    const texts = await masked.locator('.conversation-text').allTextContents()
    expect(texts).toEqual([
      'You are a helpful support agent.',
      `😀 Mail [EMAIL_1] or ${SUPPORT} about card [CREDIT_CARD_1], and [EMAIL_1] again.`,
    ])
    expect(await masked.locator('mark.finding.masked').allTextContents()).toEqual([
      '[EMAIL_1]',
      '[CREDIT_CARD_1]',
      '[EMAIL_1]',
    ])
    const rows = page.getByRole('region', { name: 'Placeholders' }).locator('tbody tr')
    expect(await rows.allInnerTexts()).toEqual([
      `[EMAIL_1]\temail\t${EMAIL}`,
      `[CREDIT_CARD_1]\tcredit_card\t${CARD}`,
    ])

    // The rule's status says masked, apart from a pass or a fail.
    const rule = page.getByRole('region', { name: 'Rules of policy mask-contact' }).locator('tbody tr')
    expect(await rule.getAttribute('class')).toBe('rule-masked')
    expect(await rule.locator('.badge').first().textContent()).toBe('masked')
    expect(await page.locator('.findings .badge-masked').allTextContents()).toEqual([
      'masked as [EMAIL_1]',
      'masked as [CREDIT_CARD_1]',
      'masked as [EMAIL_1]',
    ])
    evaluationId = (await page.locator('.evaluation dl.outcome code').textContent()) ?? ''
    expect(evaluationId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('shows the log entry’s masked rule and placeholders, and no masked value', async () => {
    await page.goto(url(`/applications/${APP}/evaluations`))
    await h1('Evaluation log').waitFor()
    const row = page.getByRole('region', { name: 'Evaluations' }).locator('tbody tr')
    await row.first().waitFor()
    expect(await row.count()).toBe(1)
    expect(await row.locator('td.source').textContent()).toBe('playground')
    expect(await row.locator('.badge-mask').textContent()).toBe('mask')
    expect(await row.locator('.badge-masked').textContent()).toBe('1 rule masked')

    await row.locator('a').click()
    await h1(/^Evaluation /).waitFor()
    expect(new URL(page.url()).pathname).toBe(`/console/applications/${APP}/evaluations/${evaluationId}`)
    await page.getByRole('heading', { name: 'Conversation, as logged (redacted)' }).waitFor()
    // The log keeps the placeholders where the values were, marked as masked.
    expect(await page.locator('.conversation mark.finding.masked').allTextContents()).toEqual([
      '[EMAIL_1]',
      '[CREDIT_CARD_1]',
      '[EMAIL_1]',
    ])
    const rule = page.getByRole('region', { name: 'Rules of policy mask-contact' }).locator('tbody tr')
    expect(await rule.getAttribute('class')).toBe('rule-masked')
    expect(await rule.locator('.badge').first().textContent()).toBe('masked')
    expect(await page.locator('.evaluation dl.outcome .badge-mask').textContent()).toBe('mask')
    // Neither the value nor the placeholders' table: the log never keeps them.
    const html = await page.content()
    expect(html).not.toContain(EMAIL)
    expect(html).not.toContain(CARD)
    expect(await page.locator('section.masked').count()).toBe(0)
  })

  it('marks placeholders and other findings in an entry whose texts the log kept in full', async () => {
    // A server of its own that keeps texts in full: masked values stand as their placeholders,
    // the rest as sent, so findings' offsets do not apply to the text kept.
    const full = await startServer({
      DATABASE_URL: `sqlite:${join(dir, 'full.db')}`,
      WARDEN_ADMIN_KEY: KEY,
      RATE_LIMIT_PER_MINUTE: '0',
      EVALUATION_LOG_CONTENT: 'full',
    })
    const tab = await context.newPage()
    const problems = watchPage(tab)
    try {
      const base = `${full.url}/v1/applications`
      expect((await call(base, 'POST', KEY, { id: APP, name: 'Support bot', description: '' })).status).toBe(
        201,
      )
      for (const policy of [
        { id: 'mask-contact', target: ['input'], rules: [{ type: 'pii', action: 'mask' }] },
        // Monitored: its finding is reported and logged as sent, and decides nothing.
        {
          id: 'refunds',
          target: ['input'],
          mode: 'monitor',
          rules: [{ type: 'keywords', flagged: ['refund'] }],
        },
      ])
        expect((await call(`${base}/${APP}/policies`, 'POST', KEY, policy)).status).toBe(201)
      const evaluated = await call(`${base}/${APP}/evaluations`, 'POST', KEY, {
        messages: [{ role: 'user', content: `😀 A refund for ${EMAIL}, please: ${EMAIL}.` }],
      })
      expect(evaluated.status).toBe(200)
      expect(evaluated.body.action).toBe('mask')

      await tab.goto(`${full.url}/console/sign-in`)
      await tab.getByLabel('API key').fill(KEY)
      await tab.getByRole('button', { name: 'Sign in' }).click()
      await tab.getByRole('heading', { level: 1, name: 'Applications' }).waitFor()
      // The list's request finishes before the next page is opened: leaving cancels it.
      await tab.waitForLoadState('networkidle')
      await tab.goto(`${full.url}/console/applications/${APP}/evaluations/${evaluated.body.id}`)
      await tab
        .getByRole('heading', { name: 'Conversation, as logged (masked values as their placeholders)' })
        .waitFor()
      const marks = tab.locator('.conversation mark.finding')
      expect(await marks.allTextContents()).toEqual(['refund', '[EMAIL_1]', '[EMAIL_1]'])
      expect(await tab.locator('.conversation mark.finding.masked').allTextContents()).toEqual([
        '[EMAIL_1]',
        '[EMAIL_1]',
      ])
      expect(await marks.first().getAttribute('title')).toBe('keyword (policy refunds, rule 0)')
      expect(await tab.content()).not.toContain(EMAIL)
      expect(problems.problems).toEqual([])
    } finally {
      await tab.close()
      await full.stop()
    }
  })

  it('renders the mask rule form, the masked run and the log entry at 1280 and 390 pixels without errors or serious accessibility violations', async () => {
    const app = `/applications/${APP}`
    const pages: { name: string; path: string; prepare?: (p: Page) => Promise<void> }[] = [
      { name: 'masking-policy', path: `${app}/policies/mask-contact` },
      {
        name: 'masking-playground',
        path: `${app}/playground`,
        prepare: async (p) => {
          await p.getByLabel('Message 2 text').fill(`Mail ${EMAIL} about card ${CARD}.`)
          await p.getByRole('button', { name: 'Run evaluation' }).click()
          await p.locator('section.masked').waitFor()
        },
      },
      { name: 'masking-evaluation', path: `${app}/evaluations/${evaluationId}` },
    ]
    const axeContext = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } })
    const shotsContext = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const axePage = await axeContext.newPage()
    const shotPage = await shotsContext.newPage()
    const shotProblems = watchPage(shotPage)
    const axe = axeSource()
    const findings: string[] = []
    for (const p of [shotPage, axePage]) {
      await p.goto(url('/sign-in'))
      await p.getByLabel('API key').fill(KEY)
      await p.getByRole('button', { name: 'Sign in' }).click()
      await p.getByRole('heading', { level: 1, name: 'Applications' }).waitFor()
      await p.waitForLoadState('networkidle')
    }
    for (const width of [1280, 390]) {
      for (const { name, path, prepare } of pages) {
        for (const p of [shotPage, axePage]) {
          await p.setViewportSize({ width, height: 900 })
          await p.goto(url(path))
          await p.locator('main h1').waitFor()
          await p.locator('main .loading').first().waitFor({ state: 'detached' })
          if (prepare) await prepare(p)
          const overflow = await p.evaluate(() => {
            const d = (globalThis as any).document.documentElement
            return d.scrollWidth - d.clientWidth
          })
          expect(overflow, `${name} scrolls sideways at ${width}px`).toBeLessThanOrEqual(0)
        }
        await shotPage.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true })
        await axePage.addScriptTag({ content: axe })
        for (const v of await seriousViolations(axePage))
          findings.push(`${name}@${width}: ${v.id} (${v.impact}) ${v.help} ${JSON.stringify(v.nodes)}`)
      }
    }
    await axeContext.close()
    await shotsContext.close()
    expect(shotProblems.problems).toEqual([])
    expect(findings).toEqual([])
  })
})

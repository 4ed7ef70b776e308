import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { type Browser, chromium, type Page } from 'playwright-core'

/** Debian's Chromium (`apt-get install chromium`): Playwright's own browser download is not used. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
]

export function chromiumInstalled(): boolean {
  return existsSync(CHROMIUM)
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true })
}

/** axe-core's browser build, injected into a page for an accessibility check. */
export function axeSource(): string {
  const require = createRequire(import.meta.url)
  return readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8')
}

export interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: { target: string[]; failureSummary?: string }[]
}

/** Runs axe on the page (which must have axe injected) and returns the serious and critical violations. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as any).axe
    const result = await axe.run((globalThis as any).document, {
      resultTypes: ['violations'],
    })
    return result.violations as AxeViolation[]
  })
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ ...v, nodes: v.nodes.slice(0, 5) }))
}

/**
 * What went wrong in a page while a test drove it: script errors, console errors (a refused
 * Content-Security-Policy shows up here), requests that failed on the network and 5xx answers.
 * The API's deliberate 4xx answers (a 422 the test provokes) are not problems; Chromium's console
 * line about them is left out too.
 */
export function watchPage(page: Page): { problems: string[] } {
  const problems: string[] = []
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('console', (message) => {
    if (message.type() !== 'error') return
    const text = message.text()
    if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(text)) return
    problems.push(`console error: ${text}`)
  })
  page.on('requestfailed', (request) =>
    problems.push(
      `request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText ?? ''}`,
    ),
  )
  page.on('response', (response) => {
    if (response.status() >= 500) problems.push(`server error: ${response.status()} ${response.url()}`)
  })
  return { problems }
}

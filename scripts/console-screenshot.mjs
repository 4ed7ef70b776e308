// Regenerates docs/console-playground.png, the README's picture of the console: a fresh server on
// a temporary SQLite store, an application with a PII policy, and the playground after evaluating
// a conversation that holds a card number, in Debian's Chromium at 1280 pixels.
// Run with `npm run screenshot` (which builds first).
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'

const root = new URL('..', import.meta.url).pathname
const output = join(root, 'docs', 'console-playground.png')
const key = 'wdn_console_screenshot_key_0123456789abcdef'
const dir = mkdtempSync(join(tmpdir(), 'warden-screenshot-'))

const server = spawn(process.execPath, [join(root, 'bin', 'warden.js'), 'serve'], {
  env: {
    PATH: process.env.PATH ?? '',
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: `sqlite:${join(dir, 'warden.db')}`,
    WARDEN_ADMIN_KEY: key,
    LOG_LEVEL: 'info',
    METRICS_PORT: '0',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
})

let browser
try {
  const base = await new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${out}`)), 20_000)
    server.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (match) {
        clearTimeout(timer)
        resolve(match[1])
      }
    })
    server.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${out}`)))
  })

  const api = async (path, body) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`)
  }
  await api('/v1/applications', {
    id: 'support-bot',
    name: 'Support bot',
    description: 'Answers questions about orders and returns.',
    provider: 'openai',
    model: 'gpt-4o',
  })
  await api('/v1/applications/support-bot/policies', {
    id: 'no-pii',
    rules: [{ type: 'pii', flagged: ['email', 'phone', 'credit_card'] }, { type: 'prompt_injection' }],
    target: ['input', 'output'],
    override_response: 'Sorry, I cannot share that.',
  })

  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
    ],
  })
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  await page.goto(`${base}/console/sign-in`)
  await page.getByLabel('API key').fill(key)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { level: 1, name: 'Applications' }).waitFor()
  await page.goto(`${base}/console/applications/support-bot/playground`)
  await page.getByRole('heading', { level: 1, name: 'Playground' }).waitFor()
  await page
    .getByLabel('Message 2 text')
    .fill('Hi! My card is 4111 1111 1111 1111 and my email is jane.doe@example.com. Can I get a refund?')
  await page.getByRole('button', { name: 'Run evaluation' }).click()
  await page.getByRole('heading', { name: 'Result' }).waitFor()
  await page.locator('mark.finding').first().waitFor()
  mkdirSync(join(root, 'docs'), { recursive: true })
  await page.screenshot({ path: output, fullPage: true })
  process.stdout.write(`wrote ${output}\n`)
} finally {
  await browser?.close()
  server.kill('SIGTERM')
  await new Promise((resolve) => (server.exitCode === null ? server.once('exit', resolve) : resolve()))
  rmSync(dir, { recursive: true, force: true })
}

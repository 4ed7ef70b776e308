import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONSOLE_CSP, consoleRoutes } from '../../src/http/console.js'
import { installProblemHandlers } from '../../src/http/problem.js'

/** The console's files as `vite build` lays them out, in a temporary directory. */
function fakeBuild(): string {
  const dir = mkdtempSync(join(tmpdir(), 'warden-console-build-'))
  mkdirSync(join(dir, 'assets'))
  writeFileSync(join(dir, 'index.html'), '<!doctype html><div id="app"></div>')
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'export {}')
  writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>')
  writeFileSync(join(dir, 'secret.json'), '{}')
  return dir
}

async function serve(dir: string): Promise<FastifyInstance> {
  const app = Fastify()
  installProblemHandlers(app)
  await app.register(consoleRoutes, { root: pathToFileURL(`${dir}/`) })
  await app.ready()
  return app
}

describe('the console routes', () => {
  let dir: string
  let app: FastifyInstance
  beforeAll(async () => {
    dir = fakeBuild()
    app = await serve(dir)
  })
  afterAll(async () => {
    await app.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('states the Content-Security-Policy in full: nothing but this origin, no inline code, no framing', () => {
    // Spelled out, not read from the constant: a loosened policy must fail here.
    expect(CONSOLE_CSP).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    )
  })

  it.each([
    '/console',
    '/console/',
    '/console/applications/support-bot/playground',
    '/console/sign-in?x=1',
  ])('answers %s with the app, revalidated, under the Content-Security-Policy', async (url) => {
    const res = await app.inject({ method: 'GET', url })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    expect(res.body).toContain('<div id="app">')
    expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP)
    expect(res.headers['cache-control']).toBe('no-cache')
    expect(res.headers['x-frame-options']).toBe('DENY')
    expect(res.headers['referrer-policy']).toBe('no-referrer')
  })

  it('sends a built asset with a year of caching, and a missing one as a 404 that is not cached', async () => {
    const asset = await app.inject({ method: 'GET', url: '/console/assets/index-abc123.js' })
    expect(asset.statusCode).toBe(200)
    expect(asset.headers['content-type']).toMatch(/javascript/)
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable')

    const missing = await app.inject({ method: 'GET', url: '/console/assets/index-000000.js' })
    expect(missing.statusCode).toBe(404)
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(missing.headers['cache-control']).toBeUndefined()
    expect(missing.headers['content-security-policy']).toBe(CONSOLE_CSP)
  })

  it('sends the favicon, and no other file outside assets/', async () => {
    expect((await app.inject({ method: 'GET', url: '/console/favicon.svg' })).statusCode).toBe(200)
    // Not an asset and not a known top-level file: it is a page address, answered with the app.
    const other = await app.inject({ method: 'GET', url: '/console/secret.json' })
    expect(other.body).toContain('<div id="app">')
  })

  it.each([
    '/console/assets/../secret.json',
    '/console/assets/..%2fsecret.json',
    '/console/assets/..%2f..%2fpackage.json',
    '/console/assets/%2e%2e/secret.json',
  ])('never sends a file outside its directory: %s', async (url) => {
    const res = await app.inject({ method: 'GET', url })
    expect(res.body).not.toBe('{}')
    expect([200, 404]).toContain(res.statusCode)
    if (res.statusCode === 200) expect(res.body).toContain('<div id="app">')
  })

  it('answers 404 with a clear detail when the console was not built', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'warden-console-empty-'))
    const bare = await serve(empty)
    try {
      const res = await bare.inject({ method: 'GET', url: '/console' })
      expect(res.statusCode).toBe(404)
      expect(res.json().detail).toMatch(/npm run build/)
    } finally {
      await bare.close()
      rmSync(empty, { recursive: true, force: true })
    }
  })
})

describe('the console in the app', () => {
  it('is public, outside the OpenAPI document, and answers other methods with 405', async () => {
    // Loaded here, so the routes' own tests above need nothing of the rest of the app.
    const { createTestApp } = await import('../helpers/app.js')
    const t = await createTestApp('sqlite')
    try {
      const doc = (await t.request({ method: 'GET', url: '/openapi.json', key: null })).json()
      expect(Object.keys(doc.paths).filter((p: string) => p.startsWith('/console'))).toEqual([])
      const page = await t.request({ method: 'GET', url: '/console', key: null })
      // Built or not (the api tier runs without a build), the answer never asks for a key.
      expect([200, 404]).toContain(page.statusCode)
      expect(page.headers['www-authenticate']).toBeUndefined()
      expect(page.headers['content-security-policy']).toBe(CONSOLE_CSP)
      const post = await t.request({ method: 'POST', url: '/console', key: null, payload: {} })
      expect(post.statusCode).toBe(405)
    } finally {
      await t.close()
    }
  })
})

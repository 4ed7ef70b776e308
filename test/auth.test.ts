import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Scope } from '../src/services/keys.service.js'
import { createTestApp, problem, type TestApp } from './helpers/app.js'
import { STORE_KINDS } from './helpers/stores.js'

interface RouteCase {
  method: 'POST'
  url: string
  scope: Scope
  payload: () => object
  /** The status a valid key of another workspace gets. */
  otherWorkspace: number
}

let seq = 0
const ROUTES: RouteCase[] = [
  {
    method: 'POST',
    url: '/v1/applications',
    scope: 'applications:write',
    payload: () => ({ name: 'x', description: '' }),
    otherWorkspace: 201,
  },
  {
    method: 'POST',
    url: '/v1/applications/home/policies',
    scope: 'policies:write',
    payload: () => ({ id: `p${++seq}`, rules: [{ type: 'relevance' }], target: ['output'] }),
    otherWorkspace: 404,
  },
]

describe.each(STORE_KINDS)('authentication and tenancy (%s)', (kind) => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp(kind)
    await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'home', name: 'Home', description: '' },
    })
  })
  afterAll(async () => {
    await t.close()
  })

  describe.each(ROUTES)('$method $url', (route) => {
    const send = (headers: Record<string, string>, key?: string | null) =>
      t.request({ method: route.method, url: route.url, payload: route.payload(), headers, key: key ?? null })

    it('answers 401 without a key, with WWW-Authenticate and no error attribute', async () => {
      const res = await send({})
      problem(res, 401, 'unauthenticated')
      expect(res.headers['www-authenticate']).toBe('Bearer realm="warden"')
    })

    it.each([
      'Basic dXNlcjpwYXNz',
      'Bearer',
      'Bearer ',
      'Token wdn_abc',
      'Bearer two words',
    ])('answers 401 for the malformed header %j', async (authorization) => {
      const res = await send({ authorization })
      problem(res, 401, 'unauthenticated')
    })

    it('answers 401 with error="invalid_token" for an unknown key', async () => {
      const res = await send({}, 'wdn_unknownunknownunknownunknown1234567890')
      problem(res, 401, 'unauthenticated')
      expect(res.headers['www-authenticate']).toBe('Bearer realm="warden", error="invalid_token"')
    })

    it('answers 401 for a revoked key', async () => {
      const key = await t.key(['admin'])
      const principal = await t.services.keys.authenticate(key)
      expect((await send({}, key)).statusCode).not.toBe(401)
      await t.services.keys.revokeKey(principal?.keyId ?? '')
      problem(await send({}, key), 401, 'unauthenticated')
    })

    it('answers 401 for an expired key', async () => {
      const key = await t.key(['admin'], { expiresAt: Math.floor(Date.now() / 1000) - 1 })
      problem(await send({}, key), 401, 'unauthenticated')
    })

    it('accepts the scheme word in any case', async () => {
      const key = await t.key([route.scope])
      const res = await t.request({
        method: route.method,
        url: route.url,
        payload: route.payload(),
        key: null,
        headers: { authorization: `bEaReR ${key}` },
      })
      expect(res.statusCode).toBe(201)
    })

    it('answers 403 for a key without the scope, and 201 with exactly that scope', async () => {
      const others = (
        ['applications:read', 'applications:write', 'policies:read', 'policies:write'] as Scope[]
      ).filter((s) => s !== route.scope)
      const res = await send({}, await t.key(others))
      const body = problem(res, 403, 'forbidden')
      expect(body.detail).toContain(route.scope)
      expect((await send({}, await t.key([route.scope]))).statusCode).toBe(201)
      expect((await send({}, await t.key(['admin']))).statusCode).toBe(201)
    })

    it('keeps a key of another workspace out of this one', async () => {
      const key = await t.key(['admin'], { workspace: 'intruder' })
      expect((await send({}, key)).statusCode).toBe(route.otherWorkspace)
    })

    it('checks the key before the body: no key and a bad body is still 401', async () => {
      const res = await t.request({
        method: route.method,
        url: route.url,
        body: '{bad',
        key: null,
        headers: { 'content-type': 'application/json' },
      })
      problem(res, 401, 'unauthenticated')
    })
  })

  it('keeps records apart: an application created in one workspace is invisible to another', async () => {
    const a = await t.key(['admin'], { workspace: 'tenant-a' })
    const b = await t.key(['admin'], { workspace: 'tenant-b' })
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/v1/applications',
          key: a,
          payload: { id: 'shared-name', name: 'A', description: '' },
        })
      ).statusCode,
    ).toBe(201)
    const policy = { id: 'p', rules: [{ type: 'relevance' }], target: ['output'] }
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/v1/applications/shared-name/policies',
          key: b,
          payload: policy,
        })
      ).statusCode,
    ).toBe(404)
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/v1/applications/shared-name/policies',
          key: a,
          payload: policy,
        })
      ).statusCode,
    ).toBe(201)
  })

  it('leaves the operational endpoints open', async () => {
    for (const url of ['/healthz', '/readyz', '/openapi.json', '/docs']) {
      const res = await t.request({ method: 'GET', url, key: null })
      expect(res.statusCode, url).toBeLessThan(400)
    }
  })
})

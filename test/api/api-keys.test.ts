import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { createServices } from '../../src/services/index.js'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'
import { manualClock } from '../helpers/clock.js'
import { STORE_KINDS } from '../helpers/stores.js'

describe.each(STORE_KINDS)('/v1/api-keys (%s)', (kind) => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp(kind)
  })
  afterAll(async () => {
    await t.close()
  })

  const createKey = (payload: object, key?: string) =>
    t.request({ method: 'POST', url: '/v1/api-keys', payload, key })

  it('creates a key whose secret is shown once and works with exactly its scopes', async () => {
    const res = await createKey({ name: 'reader', scopes: ['applications:read'] })
    expect(res.statusCode).toBe(201)
    const body = res.json()
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'reader',
      prefix: body.key.slice(0, 10),
      scopes: ['applications:read'],
      created: expect.any(Number),
      expires_at: null,
      revoked_at: null,
      key: expect.stringMatching(/^wdn_[A-Za-z0-9_-]{43}$/),
    })
    expect(res.headers.location).toBe(`/v1/api-keys/${body.id}`)
    expect((await t.request({ method: 'GET', url: '/v1/applications', key: body.key })).statusCode).toBe(200)
    problem(
      await t.request({
        method: 'POST',
        url: '/v1/applications',
        payload: { name: 'x', description: '' },
        key: body.key,
      }),
      403,
      'forbidden',
    )
  })

  it('lists keys without their secrets, in creation order, with pagination', async () => {
    const list = await t.request({ method: 'GET', url: '/v1/api-keys?limit=1' })
    expect(list.statusCode).toBe(200)
    const first = list.json()
    expect(first.data).toHaveLength(1)
    expect(first.data[0].key).toBeUndefined()
    expect(first.next_cursor).not.toBeNull()
    const rest = (await t.request({ method: 'GET', url: `/v1/api-keys?cursor=${first.next_cursor}` })).json()
    expect(rest.data.length).toBeGreaterThan(0)
    const all = [...first.data, ...rest.data]
    expect(new Set(all.map((k: { id: string }) => k.id)).size).toBe(all.length)
    expect(JSON.stringify(all)).not.toMatch(/wdn_[A-Za-z0-9_-]{43}/)
  })

  it('revokes a key: its very next request is 401, and it shows as revoked', async () => {
    const created = (await createKey({ name: 'short-lived', scopes: ['admin'] })).json()
    expect((await t.request({ method: 'GET', url: '/v1/api-keys', key: created.key })).statusCode).toBe(200)
    const res = await t.request({ method: 'DELETE', url: `/v1/api-keys/${created.id}` })
    expect(res.statusCode).toBe(204)
    problem(await t.request({ method: 'GET', url: '/v1/api-keys', key: created.key }), 401, 'unauthenticated')
    const listed = (await t.request({ method: 'GET', url: '/v1/api-keys?limit=200' })).json().data
    expect(listed.find((k: { id: string }) => k.id === created.id).revoked_at).toEqual(expect.any(Number))
    expect((await t.request({ method: 'DELETE', url: `/v1/api-keys/${created.id}` })).statusCode).toBe(204)
  })

  it('lets a key revoke itself', async () => {
    const created = (await createKey({ name: 'self', scopes: ['admin'] })).json()
    expect(
      (await t.request({ method: 'DELETE', url: `/v1/api-keys/${created.id}`, key: created.key })).statusCode,
    ).toBe(204)
    problem(await t.request({ method: 'GET', url: '/v1/api-keys', key: created.key }), 401, 'unauthenticated')
  })

  it('enforces expires_at: a key works until that second, and from it is refused', async () => {
    const clock = manualClock(Math.floor(Date.now() / 1000))
    const at = await createTestApp(kind, {}, { clock })
    try {
      const expiresAt = clock.now + 60
      const res = await at.request({
        method: 'POST',
        url: '/v1/api-keys',
        payload: { name: 'expiring', scopes: ['admin'], expires_at: expiresAt },
      })
      const created = res.json()
      expect(created.expires_at).toBe(expiresAt)
      const listWith = (key: string) => at.request({ method: 'GET', url: '/v1/api-keys', key })
      expect((await listWith(created.key)).statusCode).toBe(200)
      clock.now = expiresAt - 1
      expect((await listWith(created.key)).statusCode).toBe(200)
      // A cached authentication answer does not outlive the expiry either.
      clock.now = expiresAt
      problem(await listWith(created.key), 401, 'unauthenticated')
      clock.now = expiresAt + 3600
      problem(await listWith(created.key), 401, 'unauthenticated')
    } finally {
      await at.close()
    }
  })

  it('stops a key revoked on another instance there within half a second', async () => {
    const clock = manualClock(Math.floor(Date.now() / 1000))
    const a = await createTestApp(kind, {}, { clock })
    // Another instance over the same store: its own services, so its own authentication cache.
    const b = await buildApp({
      config: a.config,
      store: a.store,
      services: createServices({ store: a.store, config: a.config, clock }),
    })
    try {
      const created = (
        await a.request({
          method: 'POST',
          url: '/v1/api-keys',
          payload: { name: 'doomed', scopes: ['admin'] },
        })
      ).json()
      const listOn = (app: typeof b) =>
        app.inject({
          method: 'GET',
          url: '/v1/api-keys',
          headers: { authorization: `Bearer ${created.key}` },
        })
      // B has checked the key, and keeps the answer.
      expect((await listOn(b)).statusCode).toBe(200)
      expect((await a.request({ method: 'DELETE', url: `/v1/api-keys/${created.id}` })).statusCode).toBe(204)
      // The instance that revoked it refuses it at once; the other half a second later at the
      // latest (README.md: authentication answers are cached for 500 ms).
      problem(await listOn(a.app), 401, 'unauthenticated')
      clock.ms += 500
      problem(await listOn(b), 401, 'unauthenticated')
    } finally {
      await b.close()
      await a.close()
    }
  })

  it.each([
    [
      'a past expires_at',
      { name: 'x', scopes: ['admin'], expires_at: 1 },
      '/expires_at',
      'must be in the future',
    ],
    ['no scopes', { name: 'x', scopes: [] }, '/scopes', 'must not be empty'],
    [
      'an unknown scope',
      { name: 'x', scopes: ['root'] },
      '/scopes/0',
      expect.stringContaining('must be one of'),
    ],
    ['no name', { scopes: ['admin'] }, '/name', 'is required'],
    [
      'an unknown field',
      { name: 'x', scopes: ['admin'], workspace: 'other' },
      '/workspace',
      'is not a known field',
    ],
  ])('answers 422 for %s', async (_name, payload, pointer, detail) => {
    expect(problem(await createKey(payload), 422, 'validation_error').errors).toEqual([{ pointer, detail }])
  })

  it('keeps keys per workspace: another workspace cannot list or revoke them', async () => {
    const other = await t.key(['admin'], { workspace: 'tenant-2' })
    const mine = (await createKey({ name: 'mine', scopes: ['admin'] })).json()
    const theirList = (await t.request({ method: 'GET', url: '/v1/api-keys?limit=200', key: other })).json()
      .data
    expect(theirList.some((k: { id: string }) => k.id === mine.id)).toBe(false)
    problem(
      await t.request({ method: 'DELETE', url: `/v1/api-keys/${mine.id}`, key: other }),
      404,
      'not_found',
    )
    expect((await t.request({ method: 'GET', url: '/v1/api-keys', key: mine.key })).statusCode).toBe(200)
    // A key created over HTTP belongs to the caller's workspace.
    const made = (await createKey({ name: 'made-by-other', scopes: ['applications:write'] }, other)).json()
    await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'tenant-app', name: 'T', description: '' },
      key: made.key,
    })
    problem(await t.request({ method: 'GET', url: '/v1/applications/tenant-app' }), 404, 'not_found')
  })

  it('needs the admin scope on every key route', async () => {
    const writer = await t.key(['applications:write', 'applications:read', 'policies:write', 'policies:read'])
    for (const route of [
      { method: 'POST', url: '/v1/api-keys', payload: { name: 'x', scopes: ['admin'] } },
      { method: 'GET', url: '/v1/api-keys' },
      { method: 'DELETE', url: '/v1/api-keys/anything' },
    ] as const) {
      problem(await t.request({ ...route, key: writer }), 403, 'forbidden')
    }
  })
})

describe.each(STORE_KINDS)('secrets at rest (%s)', (kind) => {
  it('never stores a key secret in clear, in any table', async () => {
    const t = await createTestApp(kind)
    try {
      const secrets = [t.adminKey]
      for (let i = 0; i < 3; i++) {
        const res = await t.request({
          method: 'POST',
          url: '/v1/api-keys',
          payload: { name: `k${i}`, scopes: ['admin'] },
          headers: { 'idempotency-key': `secret-${i}` },
        })
        secrets.push(res.json().key)
      }
      const tables = [
        'workspaces',
        'api_keys',
        'applications',
        'policies',
        'policy_revisions',
        'idempotency_keys',
      ] as const
      let dump = ''
      for (const table of tables)
        dump += JSON.stringify(await t.store.db.selectFrom(table).selectAll().execute())
      expect(dump.length).toBeGreaterThan(100)
      for (const secret of secrets) {
        expect(dump).not.toContain(secret)
        // Not even the random part beyond the short display prefix.
        expect(dump).not.toContain(secret.slice(10, 30))
      }
    } finally {
      await t.close()
    }
  })
})

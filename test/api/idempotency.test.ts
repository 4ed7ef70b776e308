import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ABANDONED_AFTER_SECONDS } from '../../src/services/idempotency.service.js'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'

describe.each(STORE_KINDS)('Idempotency-Key (%s)', (kind) => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp(kind)
    await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'bot', name: 'Bot', description: '' },
    })
  })
  afterAll(async () => {
    await t.close()
  })

  const post = (url: string, payload: object, key: string, apiKey?: string) =>
    t.request({ method: 'POST', url, payload, headers: { 'idempotency-key': key }, key: apiKey })

  it.each([
    ['/v1/applications', { name: 'Generated id', description: '' }],
    [
      '/v1/applications/bot/policies',
      { id: 'idem-policy', rules: [{ type: 'relevance' }], target: ['output'] },
    ],
    ['/v1/api-keys', { name: 'idem key', scopes: ['applications:read'] }],
  ])('replays the first answer of POST %s, byte for byte, and creates nothing twice', async (url, payload) => {
    const key = `k-${url}`
    const first = await post(url, payload, key)
    expect(first.statusCode).toBe(201)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    const again = await post(url, payload, key)
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.body).toBe(first.body)
    expect(again.headers.location).toBe(first.headers.location)
    expect(again.headers.etag).toBe(first.headers.etag)
    expect(again.headers['content-type']).toBe(first.headers['content-type'])
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id'])
  })

  it('answers 422 when the key is reused with a different body', async () => {
    expect((await post('/v1/applications', { name: 'One', description: '' }, 'reuse')).statusCode).toBe(201)
    const body = problem(
      await post('/v1/applications', { name: 'Two', description: '' }, 'reuse'),
      422,
      'validation_error',
    )
    expect(body.errors).toEqual([
      { pointer: '#/headers/idempotency-key', detail: expect.stringContaining('different request') },
    ])
  })

  it('treats the same body with keys in another order as the same request', async () => {
    const a = await post('/v1/applications', { name: 'Ordered', description: 'x' }, 'order')
    const b = await post('/v1/applications', { description: 'x', name: 'Ordered' }, 'order')
    expect(b.headers['idempotent-replayed']).toBe('true')
    expect(b.body).toBe(a.body)
  })

  it('answers 409 while the first request with the key is still running', async () => {
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        post('/v1/applications', { name: 'Concurrent', description: '' }, 'busy'),
      ),
    )
    const codes = answers.map((a) => a.statusCode)
    const created = answers.filter(
      (a) => a.statusCode === 201 && a.headers['idempotent-replayed'] === undefined,
    )
    expect(created).toHaveLength(1)
    expect(codes.every((c) => c === 201 || c === 409)).toBe(true)
    for (const a of answers.filter((x) => x.statusCode === 409)) problem(a, 409, 'conflict')
    const list = (await t.request({ method: 'GET', url: '/v1/applications?limit=200' })).json()
    expect(list.data.filter((a: { name: string }) => a.name === 'Concurrent')).toHaveLength(1)
  })

  it('checks 409 before the body: a running key with another body is still 409', async () => {
    await t.store.db
      .insertInto('idempotency_keys')
      .values({
        workspace_id: t.workspaceId,
        key_hash: (await import('node:crypto')).createHash('sha256').update('running').digest('hex'),
        fingerprint: 'something else',
        state: 'running',
        response: null,
        created: Math.floor(Date.now() / 1000),
        expires_at: Math.floor(Date.now() / 1000) + 3600,
      })
      .execute()
    problem(await post('/v1/applications', { name: 'X', description: '' }, 'running'), 409, 'conflict')
  })

  it('lets a request whose process died be retried after a while', async () => {
    const stale = Math.floor(Date.now() / 1000) - ABANDONED_AFTER_SECONDS - 1
    await t.store.db
      .insertInto('idempotency_keys')
      .values({
        workspace_id: t.workspaceId,
        key_hash: (await import('node:crypto')).createHash('sha256').update('abandoned').digest('hex'),
        fingerprint: 'whatever',
        state: 'running',
        response: null,
        created: stale,
        expires_at: stale + 86_400,
      })
      .execute()
    expect(
      (await post('/v1/applications', { name: 'Retried', description: '' }, 'abandoned')).statusCode,
    ).toBe(201)
  })

  it('stores only 2xx answers: a failed request may be retried with the same key', async () => {
    const bad = await post('/v1/applications', { name: '', description: '' }, 'retry-after-fix')
    expect(bad.statusCode).toBe(422)
    const conflict = await post(
      '/v1/applications',
      { id: 'bot', name: 'Dup', description: '' },
      'retry-after-409',
    )
    expect(conflict.statusCode).toBe(409)
    expect(
      (await post('/v1/applications', { id: 'bot', name: 'Dup', description: '' }, 'retry-after-409'))
        .statusCode,
    ).toBe(409)
    const good = await post('/v1/applications', { name: 'Fixed', description: '' }, 'retry-after-fix')
    expect(good.statusCode).toBe(201)
    expect(good.headers['idempotent-replayed']).toBeUndefined()
  })

  it('keeps keys per workspace', async () => {
    const other = await t.key(['admin'], { workspace: 'idem-other' })
    const mine = await post('/v1/applications', { name: 'Mine', description: '' }, 'shared-key')
    const theirs = await post('/v1/applications', { name: 'Mine', description: '' }, 'shared-key', other)
    expect(theirs.statusCode).toBe(201)
    expect(theirs.headers['idempotent-replayed']).toBeUndefined()
    expect(theirs.json().id).not.toBe(mine.json().id)
  })

  it('treats an expired key as new', async () => {
    const first = await post('/v1/applications', { name: 'Old', description: '' }, 'expired')
    await t.store.db
      .updateTable('idempotency_keys')
      .set({ expires_at: 1 })
      .where('workspace_id', '=', t.workspaceId)
      .execute()
    const again = await post('/v1/applications', { name: 'Old', description: '' }, 'expired')
    expect(again.statusCode).toBe(201)
    expect(again.json().id).not.toBe(first.json().id)
    const purged = await t.services.idempotency.purgeExpired()
    expect(purged).toBeGreaterThan(0)
  })

  it.each([['a'.repeat(256)], ['tab\there'], ['']])('answers 422 for the malformed key %j', async (key) => {
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { name: 'k', description: '' },
      headers: { 'idempotency-key': key },
    })
    problem(res, 422, 'validation_error')
  })

  it('never stores the answer in clear: a replayed API key secret is encrypted at rest', async () => {
    const res = await post('/v1/api-keys', { name: 'secret holder', scopes: ['admin'] }, 'secret-key')
    const secret = res.json().key as string
    const rows = await t.store.db.selectFrom('idempotency_keys').selectAll().execute()
    const dump = JSON.stringify(rows)
    expect(dump).not.toContain(secret)
    expect(dump).not.toContain(secret.slice(4, 20))
    expect(dump).not.toContain('secret-key')
    expect(
      (await post('/v1/api-keys', { name: 'secret holder', scopes: ['admin'] }, 'secret-key')).json().key,
    ).toBe(secret)
  })
})

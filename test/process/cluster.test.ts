import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call as callUrl } from '../helpers/http.js'
import { type RunningServer, startServer } from '../helpers/process.js'
import { freshStoreConfig, STORE_KINDS, type TestStoreConfig } from '../helpers/stores.js'
import { eventually } from '../helpers/wait.js'

const ADMIN = 'cluster-admin-secret-0123456789abcdef'

/** The shared `call`, addressed to one instance by path, as the admin unless another key is given. */
const call = (
  server: RunningServer,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  key = ADMIN,
) => callUrl(`${server.url}${path}`, method, key, body, headers)

describe.runIf(STORE_KINDS.includes('postgres'))('several instances over one PostgreSQL database', () => {
  let store: TestStoreConfig
  const servers: RunningServer[] = []

  const start = async (count: number, env: Record<string, string> = {}) => {
    const started = await Promise.all(
      Array.from({ length: count }, () => startServer({ ...store.env, WARDEN_ADMIN_KEY: ADMIN, ...env })),
    )
    servers.push(...started)
    return started
  }

  beforeAll(async () => {
    store = await freshStoreConfig('postgres')
  })
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()))
    await store.drop()
  })

  it('starts three instances at once on an empty database: migrations run once, all serve', async () => {
    const [a, b, c] = await start(3)
    for (const s of [a, b, c]) expect((await fetch(`${s?.url}/readyz`)).status).toBe(200)
  })

  it('gives exactly one 201 for concurrent creates of one id spread over the instances', async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call(servers[i % servers.length] as RunningServer, 'POST', '/v1/applications', {
          id: 'shared',
          name: 'S',
          description: '',
        }),
      ),
    )
    const codes = answers.map((a) => a.status)
    expect(codes.filter((c) => c === 201)).toHaveLength(1)
    expect(codes.filter((c) => c === 409)).toHaveLength(29)
  })

  it('replays an idempotency key on another instance', async () => {
    const [a, b] = servers as [RunningServer, RunningServer]
    const first = await call(
      a,
      'POST',
      '/v1/applications',
      { name: 'Idem', description: '' },
      { 'idempotency-key': 'cross-1' },
    )
    const again = await call(
      b,
      'POST',
      '/v1/applications',
      { name: 'Idem', description: '' },
      { 'idempotency-key': 'cross-1' },
    )
    expect(first.status).toBe(201)
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.text).toBe(first.text)
  })

  it('enforces a policy change made on one instance from the next evaluation on every other', async () => {
    const [a, b, c] = servers as [RunningServer, RunningServer, RunningServer]
    expect(
      (await call(a, 'POST', '/v1/applications', { id: 'guarded', name: 'G', description: '' })).status,
    ).toBe(201)
    const policy = { id: 'words', rules: [{ type: 'keywords', flagged: ['refund'] }], target: ['input'] }
    expect((await call(a, 'POST', '/v1/applications/guarded/policies', policy)).status).toBe(201)
    const evaluate = async (server: RunningServer, content: string) =>
      (
        await call(server, 'POST', '/v1/applications/guarded/evaluations', {
          messages: [{ role: 'user', content }],
        })
      ).body as { verdict: string; policies: { revision: number }[] }
    // Every instance compiles revision 1 and keeps it in memory.
    for (const s of [a, b, c]) expect((await evaluate(s, 'a refund please')).verdict).toBe('fail')
    const changed = await call(a, 'PATCH', '/v1/applications/guarded/policies/words', {
      rules: [{ type: 'keywords', flagged: ['chargeback'] }],
    })
    expect(changed.status).toBe(200)
    // No waiting: the very next evaluation anywhere uses revision 2.
    for (const s of [b, c]) {
      const after = await evaluate(s, 'a refund please')
      expect(after.verdict).toBe('pass')
      expect(after.policies[0]?.revision).toBe(2)
    }
  })

  it('stops a revoked key on every instance: at once where it was revoked, soon on the others', async () => {
    const created = await call(servers[0] as RunningServer, 'POST', '/v1/api-keys', {
      name: 'doomed',
      scopes: ['admin'],
    })
    const key = created.body.key as string
    const statusOn = async (s: RunningServer) =>
      (await call(s, 'GET', '/v1/applications', undefined, {}, key)).status
    // Every instance has checked the key, and keeps the answer a while.
    for (const s of servers) expect(await statusOn(s)).toBe(200)
    const revoking = servers[1] as RunningServer
    expect((await call(revoking, 'DELETE', `/v1/api-keys/${created.body.id}`)).status).toBe(204)
    expect(await statusOn(revoking)).toBe(401)
    // The others stop once their cached answer runs out: half a second on their clock, shown with a
    // set clock in test/api/api-keys.test.ts; here, only that it happens, however slow the machine.
    for (const s of servers)
      await eventually(`the revoked key refused by ${s.url}`, async () => (await statusOn(s)) === 401)
  })

  it('shows a policy change to the next read on every instance', async () => {
    const [a, b, c] = servers as [RunningServer, RunningServer, RunningServer]
    await call(a, 'POST', '/v1/applications/shared/policies', {
      id: 'p',
      rules: [{ type: 'relevance' }],
      target: ['output'],
    })
    const patched = await call(b, 'PATCH', '/v1/applications/shared/policies/p', { target: ['input'] })
    expect(patched.body.revision).toBe(2)
    for (const s of [a, b, c]) {
      const read = await call(s, 'GET', '/v1/applications/shared/policies/p')
      expect(read.body.revision).toBe(2)
      expect(read.body.target).toEqual(['input'])
      expect(read.headers.get('etag')).toBe(patched.headers.get('etag'))
    }
  })

  it('lets exactly one of racing conditional PATCHes on different instances win', async () => {
    const etag =
      (await call(servers[0] as RunningServer, 'GET', '/v1/applications/shared')).headers.get('etag') ?? ''
    const answers = await Promise.all(
      servers.map((s, i) =>
        call(s, 'PATCH', '/v1/applications/shared', { name: `winner-${i}` }, { 'if-match': etag }),
      ),
    )
    expect(answers.map((a) => a.status).sort()).toEqual([200, 412, 412])
  })

  it('counts rate limits per instance without REDIS_URL, and across instances with it', async () => {
    const perInstance = await start(2, { RATE_LIMIT_PER_MINUTE: '4' })
    const shared = await start(2, { RATE_LIMIT_PER_MINUTE: '4', REDIS_URL: 'redis://127.0.0.1:6379' })
    const burst = async (pair: RunningServer[]) => {
      const key = (
        await call(servers[0] as RunningServer, 'POST', '/v1/api-keys', {
          name: 'limited',
          scopes: ['admin'],
        })
      ).body.key
      const codes: number[] = []
      for (let i = 0; i < 10; i++)
        codes.push(
          (await call(pair[i % 2] as RunningServer, 'GET', '/v1/applications', undefined, {}, key)).status,
        )
      return codes
    }
    // Each instance lets 4 through: 8 in all before every answer is 429.
    expect(await burst(perInstance)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429, 429])
    // One budget of 4 for the key, whichever instance answers.
    expect(await burst(shared)).toEqual([200, 200, 200, 200, 429, 429, 429, 429, 429, 429])
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Scope } from '../../src/services/credentials.js'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'
import { startUpstreamDouble, type UpstreamDouble } from '../helpers/upstream-double.js'

interface Operation {
  method: string
  path: string
  operationId: string
  scope: Scope
}

const ALL_SCOPES: Scope[] = [
  'applications:read',
  'applications:write',
  'policies:read',
  'policies:write',
  'evaluations:read',
  'evaluations:write',
  'admin',
]

/** A valid body for each operation that takes one; `n` keeps ids fresh. */
function bodyFor(operationId: string, n: number): object | undefined {
  switch (operationId) {
    case 'createApplication':
      return { id: `created-${n}`, name: 'x', description: '' }
    case 'updateApplication':
      return { description: `changed ${n}` }
    case 'createPolicy':
      return { id: `created-${n}`, rules: [{ type: 'relevance' }], target: ['output'] }
    case 'updatePolicy':
      return { target: n % 2 ? ['input'] : ['output'] }
    case 'createApiKey':
      return { name: `k${n}`, scopes: ['applications:read'] }
    case 'createEvaluation':
      return { messages: [{ role: 'user', content: `hello ${n}` }] }
    case 'createPolicyTest':
      return {
        id: `case-${n}`,
        name: 'x',
        messages: [{ role: 'user', content: 'hi' }],
        expected: { verdict: 'pass' },
      }
    case 'updatePolicyTest':
      return { name: `changed ${n}` }
    case 'runPolicyTests':
      return {}
    case 'createChatCompletion':
      return { model: 'm', messages: [{ role: 'user', content: `hello ${n}` }] }
    case 'createResponse':
      return { model: 'm', input: `hello ${n}` }
    case 'applyLiteLLMGuardrail':
      return { input_type: 'request', texts: [`hello ${n}`] }
    default:
      return undefined
  }
}

describe.each(
  STORE_KINDS,
)('the auth matrix over every /v1 operation in the OpenAPI document (%s)', (kind) => {
  let t: TestApp
  let operations: Operation[]
  let n = 0
  // Guarded chat completions need a model provider: the matrix's applications use this one.
  let upstream: UpstreamDouble

  beforeAll(async () => {
    upstream = await startUpstreamDouble()
    t = await createTestApp(kind, { PROVIDER_MATRIX_BASE_URL: upstream.baseUrl })
    const doc = (await t.request({ method: 'GET', url: '/openapi.json', key: null })).json()
    operations = Object.entries(doc.paths as Record<string, Record<string, any>>)
      .filter(([path]) => path.startsWith('/v1/'))
      .flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, op]) => ({
          method: method.toUpperCase(),
          path,
          operationId: op.operationId,
          scope: op.security?.[0]?.bearerAuth?.[0],
        })),
      )
  })
  afterAll(async () => {
    await t.close()
    await upstream.close()
  })

  /** Makes sure the records an operation names exist in `default`, then sends it. */
  async function send(op: Operation, key: string | null, headers: Record<string, string> = {}) {
    n++
    const app = `app-${n}`
    const admin = t.adminKey
    await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: app, name: 'A', description: '', provider: 'matrix' },
      key: admin,
    })
    await t.request({
      method: 'POST',
      url: `/v1/applications/${app}/policies`,
      payload: { id: 'pol', rules: [{ type: 'relevance' }], target: ['output'] },
      key: admin,
    })
    // A case the policy passes whatever the matrix patches (no output: relevance is skipped).
    await t.request({
      method: 'POST',
      url: `/v1/applications/${app}/policies/pol/tests`,
      payload: {
        id: 'case',
        name: 'x',
        messages: [{ role: 'user', content: 'hi' }],
        expected: { verdict: 'pass' },
      },
      key: admin,
    })
    const keyId = (
      await t.request({
        method: 'POST',
        url: '/v1/api-keys',
        payload: { name: 'victim', scopes: ['policies:read'] },
        key: admin,
      })
    ).json().id
    const evaluationId = (
      await t.request({
        method: 'POST',
        url: `/v1/applications/${app}/evaluations`,
        payload: { messages: [{ role: 'user', content: 'hello' }] },
        key: admin,
      })
    ).json().id
    const url = op.path
      .replace('{evaluation_id}', evaluationId)
      .replace('{application_id}', app)
      .replace('{policy_id}', 'pol')
      .replace('{test_id}', 'case')
      .replace('{revision}', '1')
      .replace('{key_id}', keyId)
    const payload = bodyFor(op.operationId, n)
    return t.request({ method: op.method as 'GET', url, payload, key, headers })
  }

  it('finds every operation with a declared scope', () => {
    expect(operations.length).toBeGreaterThanOrEqual(15)
    for (const op of operations) expect(ALL_SCOPES, `${op.method} ${op.path}`).toContain(op.scope)
  })

  it('answers 401 without a key, with a bare WWW-Authenticate', async () => {
    for (const op of operations) {
      const res = await send(op, null)
      problem(res, 401, 'unauthenticated')
      expect(res.headers['www-authenticate'], op.operationId).toBe('Bearer realm="warden"')
    }
  })

  it('answers 401 for malformed Authorization headers', async () => {
    for (const op of operations) {
      for (const authorization of [
        'Basic dXNlcjpwYXNz',
        'Bearer',
        'Bearer ',
        'Token wdn_abc',
        'Bearer two words',
      ]) {
        problem(await send(op, null, { authorization }), 401, 'unauthenticated')
      }
    }
  })

  it('answers 401 with error="invalid_token" for unknown, revoked and expired keys', async () => {
    const revoked = await t.key(['admin'])
    const principal = await t.services.authentication.authenticate(revoked)
    await t.services.operator.revokeKey(principal?.keyId ?? '')
    const expired = await t.key(['admin'], { expiresAt: Math.floor(Date.now() / 1000) - 1 })
    for (const op of operations) {
      for (const key of ['wdn_unknownunknownunknownunknown1234567890', revoked, expired]) {
        const res = await send(op, key)
        problem(res, 401, 'unauthenticated')
        expect(res.headers['www-authenticate']).toBe('Bearer realm="warden", error="invalid_token"')
      }
    }
  })

  it('answers 403 for a key with every scope but the one needed, and succeeds with exactly it', async () => {
    for (const op of operations) {
      const others = ALL_SCOPES.filter((s) => s !== op.scope && s !== 'admin')
      const denied = await send(op, await t.key(others))
      expect(problem(denied, 403, 'forbidden').detail, op.operationId).toContain(op.scope)
      const allowed = await send(op, await t.key([op.scope]))
      expect(allowed.statusCode, `${op.operationId}: ${allowed.body}`).toBeLessThan(300)
      const admin = await send(op, await t.key(['admin']))
      expect(admin.statusCode, op.operationId).toBeLessThan(300)
    }
  })

  it("answers 404 to another workspace's key for every record it names, and never shows it", async () => {
    const intruder = await t.key(['admin'], { workspace: 'intruder' })
    for (const op of operations) {
      const res = await send(op, intruder)
      if (op.path.includes('{')) problem(res, 404, 'not_found')
      else {
        expect(res.statusCode, op.operationId).toBeLessThan(300)
        expect(res.body).not.toContain('app-')
      }
    }
  })

  it('accepts the scheme word in any case', async () => {
    const key = await t.key(['admin'])
    const res = await t.request({
      method: 'GET',
      url: '/v1/applications',
      key: null,
      headers: { authorization: `bEaReR ${key}` },
    })
    expect(res.statusCode).toBe(200)
  })

  it('checks the key before reading the body: no key and a bad body is still 401', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications',
      body: '{bad',
      key: null,
      headers: { 'content-type': 'application/json' },
    })
    problem(res, 401, 'unauthenticated')
  })

  it('leaves the operational endpoints open', async () => {
    for (const url of ['/healthz', '/readyz', '/openapi.json', '/docs']) {
      const res = await t.request({ method: 'GET', url, key: null })
      expect(res.statusCode, url).toBeLessThan(400)
    }
  })
})

import { Ajv } from 'ajv'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_TARGET_BYTES } from '../../src/http/client-errors.js'
import { ApiKeyCreatedSchema, ApiKeySchema } from '../../src/schemas/api-keys.js'
import { ApplicationSchema } from '../../src/schemas/applications.js'
import { PolicyRuleSchema, PolicySchema, RULE_TYPES, TARGETS } from '../../src/schemas/policies.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'

/** Cases per property; FUZZ_RUNS raises it for a long run (npm run fuzz). */
const RUNS = Number(process.env.FUZZ_RUNS ?? 400)

const ajv = new Ajv({ allowUnionTypes: true, strict: false })
for (const schema of [PolicyRuleSchema, ApplicationSchema, PolicySchema, ApiKeySchema, ApiKeyCreatedSchema])
  ajv.addSchema(schema)
const validApplication = ajv.getSchema('Application')
const validPolicy = ajv.getSchema('Policy')

/** Strings that break naive code: NUL, lone surrogates, prototype names, huge and odd text. */
const nastyString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom(
    '\u0000',
    '\ud800',
    '\udfff',
    'a\u0000b',
    '__proto__',
    'constructor',
    'prototype',
    '',
    ' ',
    '../..',
    '%00',
    '\u202e',
  ),
  fc.string({ minLength: 200, maxLength: 300 }),
)
const nastyNumber = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(0, -0, 1e308, -1e308, Number.MAX_SAFE_INTEGER, 2 ** 63, 0.1 + 0.2),
)
/** Any JSON value, including deep nesting and wrong types everywhere. */
const anything: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    nastyString,
    nastyNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(nastyString, tie('value'), { maxKeys: 4 }),
  ),
})).value

const rule = fc.record(
  {
    type: fc.oneof(fc.constantFrom(...RULE_TYPES), nastyString),
    expected: fc.oneof(fc.constantFrom('pass', 'fail', null), anything),
    value: fc.oneof(
      fc.constantFrom('\\d+', '(a', '500', '(?=x)', null),
      // Patterns RE2 compiles slowly: a property class repeated (a hostile tenant's drafts).
      fc.integer({ min: 1, max: 1000 }).map((n) => `\\p{L}{${n}}`),
      nastyString,
      anything,
    ),
    threshold: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), nastyNumber, anything),
    flagged: fc.oneof(
      fc.constantFrom(['email'], ['refund'], [], null),
      fc.array(nastyString, { maxLength: 5 }),
      anything,
    ),
  },
  { requiredKeys: [] },
)
const policy = fc.record(
  {
    id: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._~-]{0,20}$/), nastyString),
    rules: fc.oneof(fc.array(rule, { minLength: 1, maxLength: 4 }), anything),
    target: fc.oneof(
      fc.subarray([...TARGETS], { minLength: 1 }),
      fc.array(nastyString, { maxLength: 3 }),
      anything,
    ),
    definition: fc.oneof(fc.string({ minLength: 1 }), fc.constant(null), anything),
    override_response: fc.oneof(fc.string(), fc.constant(null), anything),
    revision: fc.oneof(fc.integer(), anything),
    extra: anything,
  },
  { requiredKeys: [] },
)
const application = fc.record(
  {
    id: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._~-]{0,20}$/), fc.constant(null), nastyString),
    name: fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), nastyString, anything),
    description: fc.oneof(fc.string({ maxLength: 40 }), anything),
    provider: fc.oneof(fc.string({ minLength: 1, maxLength: 10 }), fc.constant(null), anything),
    model: fc.oneof(fc.string({ minLength: 1, maxLength: 10 }), anything),
    parameters: fc.oneof(
      fc.record(
        {
          temperature: fc.oneof(fc.double({ min: 0, max: 2, noNaN: true }), nastyNumber, anything),
          max_tokens: fc.oneof(fc.integer({ min: 1, max: 10_000_000 }), nastyNumber),
          top_p: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), anything),
          top_k: fc.oneof(fc.integer({ min: 1, max: 10_000 }), anything),
          system_prompt: fc.oneof(fc.string(), anything),
        },
        { requiredKeys: [] },
      ),
      anything,
    ),
    created: fc.oneof(fc.integer(), anything),
  },
  { requiredKeys: [] },
)
/** Bodies as raw text: JSON of the above, or text that is not quite JSON. */
const rawBody = (structured: fc.Arbitrary<unknown>) =>
  fc.oneof(
    { weight: 5, arbitrary: structured.map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: fc.string({ unit: 'binary' }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '{',
        '[]',
        '{"__proto__":{"x":1}}',
        '{"a":1}{"b":2}',
        `${'['.repeat(5000)}${']'.repeat(5000)}`,
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constant(
        JSON.stringify({ name: 'x', description: '', provider: Array(10_000).fill('a') }),
      ),
    },
  )
/** Every UTF-8 byte percent-encoded; a lone surrogate becomes U+FFFD instead of throwing. */
const percentEncode = (s: string) =>
  [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')
const pathSegment = fc.oneof(
  fc.constantFrom('bot', 'missing', 'p1'),
  fc.stringMatching(/^[A-Za-z0-9._~-]{1,30}$/),
  nastyString.map(percentEncode),
  fc.constantFrom('%ff%fe', '%', '%zz', '%00', '..', '%2e%2e'),
)
const query = fc.oneof(
  fc.constant(''),
  fc
    .record(
      { limit: fc.oneof(fc.integer({ min: -5, max: 300 }).map(String), nastyString), cursor: nastyString },
      { requiredKeys: [] },
    )
    .map((q) => `?${new URLSearchParams(q as Record<string, string>).toString()}`),
)

describe('fuzzing every route', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp('sqlite', { RATE_LIMIT_PER_MINUTE: '0' })
    await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'bot', name: 'Bot', description: '' },
    })
    await t.request({
      method: 'POST',
      url: '/v1/applications/bot/policies',
      payload: { id: 'p1', rules: [{ type: 'relevance' }], target: ['output'] },
    })
  })
  afterAll(async () => {
    await t.close()
  })

  /** The invariants every answer keeps. */
  function check(
    res: { statusCode: number; headers: Record<string, unknown>; body: string; json(): any },
    kind: 'application' | 'policy' | 'other',
  ) {
    expect(res.statusCode, res.body).toBeLessThan(500)
    if (res.statusCode >= 400) {
      expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/)
      const body = res.json()
      expect(body.status).toBe(res.statusCode)
      expect(typeof body.code).toBe('string')
    } else if (res.statusCode < 300 && res.body) {
      const body = res.json()
      if (kind === 'application') expect(validApplication?.(body), res.body).toBe(true)
      if (kind === 'policy') expect(validPolicy?.(body), res.body).toBe(true)
    }
  }

  const send = (method: string, url: string, body?: string, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: method as 'POST',
      url,
      headers: {
        authorization: `Bearer ${t.adminKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body,
    })

  it('POST /v1/applications', async () => {
    await fc.assert(
      fc.asyncProperty(rawBody(application), async (body) =>
        check(await send('POST', '/v1/applications', body), 'application'),
      ),
      { numRuns: RUNS },
    )
  })

  it('PATCH /v1/applications/{id}', async () => {
    await fc.assert(
      fc.asyncProperty(pathSegment, rawBody(application), async (id, body) =>
        check(await send('PATCH', `/v1/applications/${id}`, body), 'application'),
      ),
      { numRuns: RUNS },
    )
  })

  it('POST /v1/applications/{id}/policies', async () => {
    await fc.assert(
      fc.asyncProperty(pathSegment, rawBody(policy), async (app, body) =>
        check(await send('POST', `/v1/applications/${app}/policies`, body), 'policy'),
      ),
      { numRuns: RUNS },
    )
  })

  it('PATCH /v1/applications/{id}/policies/{policy_id}', async () => {
    await fc.assert(
      fc.asyncProperty(rawBody(policy), async (body) =>
        check(await send('PATCH', '/v1/applications/bot/policies/p1', body), 'policy'),
      ),
      { numRuns: RUNS },
    )
  })

  it('POST /v1/api-keys', async () => {
    const keyBody = fc.record(
      {
        name: fc.oneof(fc.string(), anything),
        scopes: fc.oneof(fc.array(fc.constantFrom('admin', 'policies:read', 'x')), anything),
        expires_at: fc.oneof(fc.integer(), anything),
      },
      { requiredKeys: [] },
    )
    await fc.assert(
      fc.asyncProperty(rawBody(keyBody), async (body) =>
        check(await send('POST', '/v1/api-keys', body), 'other'),
      ),
      { numRuns: RUNS },
    )
  })

  it('every GET and DELETE, with hostile paths and query strings', async () => {
    const paths = fc.oneof(
      query.map((q) => `/v1/applications${q}`),
      fc.tuple(pathSegment, query).map(([a, q]) => `/v1/applications/${a}${q}`),
      fc
        .tuple(pathSegment, pathSegment, query)
        .map(([a, p, q]) => `/v1/applications/${a}/policies/${p}/revisions${q}`),
      fc
        .tuple(pathSegment, pathSegment, fc.oneof(fc.integer().map(String), nastyString.map(percentEncode)))
        .map(([a, p, n]) => `/v1/applications/${a}/policies/${p}/revisions/${n}`),
      query.map((q) => `/v1/api-keys${q}`),
      nastyString.map((s) => `/${percentEncode(s)}`),
    )
    await fc.assert(
      fc.asyncProperty(
        paths,
        fc.constantFrom('GET', 'DELETE', 'HEAD', 'OPTIONS', 'PUT'),
        async (url, method) => {
          const res = await send(method, url)
          expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(500)
          if (res.statusCode >= 400 && method !== 'HEAD')
            expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/)
        },
      ),
      { numRuns: RUNS * 2 },
    )
  })

  it('hostile headers: Authorization, Idempotency-Key, If-Match, Content-Type, X-Request-Id', async () => {
    const header = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      maxLength: 300,
    })
    await fc.assert(
      fc.asyncProperty(header, header, header, header, async (idem, ifMatch, type, requestId) => {
        const res = await send('PATCH', '/v1/applications/bot', JSON.stringify({ description: 'x' }), {
          'idempotency-key': idem,
          'if-match': ifMatch,
          'content-type': type || 'application/json',
          'x-request-id': requestId,
        })
        check(res, 'application')
        const created = await send(
          'POST',
          '/v1/applications',
          JSON.stringify({ name: 'h', description: '' }),
          { 'idempotency-key': idem },
        )
        check(created, 'application')
        const auth = await t.app.inject({
          method: 'GET',
          url: '/v1/applications',
          headers: { authorization: idem },
        })
        expect([401, 200]).toContain(auth.statusCode)
      }),
      { numRuns: RUNS },
    )
  })

  it('another workspace’s key, on every route and any id: never a 2xx on the first workspace’s records, never a 5xx', async () => {
    const intruder = await t.key(['admin'], { workspace: 'intruder' })
    // Records of their own, which the fuzzing of the other routes leaves alone.
    await send(
      'POST',
      '/v1/applications',
      JSON.stringify({ id: 'guarded', name: 'Guarded', description: '' }),
    )
    await send(
      'POST',
      '/v1/applications/guarded/policies',
      JSON.stringify({ id: 'gp', rules: [{ type: 'length', value: '10' }], target: ['input'] }),
    )
    const routes = fc.oneof(
      fc.constantFrom(
        ['GET', '/v1/applications/guarded'],
        ['PATCH', '/v1/applications/guarded'],
        ['DELETE', '/v1/applications/guarded'],
        ['GET', '/v1/applications/guarded/policies'],
        ['GET', '/v1/applications/guarded/policies/gp'],
        ['PATCH', '/v1/applications/guarded/policies/gp'],
        ['DELETE', '/v1/applications/guarded/policies/gp'],
        ['GET', '/v1/applications/guarded/policies/gp/revisions'],
        ['GET', '/v1/applications/guarded/policies/gp/revisions/1'],
        ['GET', '/v1/applications/guarded/policies/gp/tests'],
        ['POST', '/v1/applications/guarded/policies/gp/tests'],
        ['POST', '/v1/applications/guarded/policies/gp/test-runs'],
        ['POST', '/v1/applications/guarded/evaluations'],
        ['GET', '/v1/applications/guarded/evaluations'],
        ['POST', '/v1/applications/guarded/policies'],
        ['POST', '/v1/applications/guarded/chat/completions'],
      ),
    )
    const body = fc.oneof(
      fc.constant(undefined),
      fc.constant(JSON.stringify({ description: 'taken over' })),
      fc.constant(JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] })),
      fc.constant(JSON.stringify({})),
      rawBody(policy),
    )
    await fc.assert(
      fc.asyncProperty(routes, body, async ([method, url], payload) => {
        const res = await t.app.inject({
          method: method as 'GET',
          url: url as string,
          headers: {
            authorization: `Bearer ${intruder}`,
            ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(payload === undefined ? {} : { body: payload }),
        })
        expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(500)
        // The intruder has no `guarded` of its own: every answer is an error, none the first workspace's record.
        expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeGreaterThanOrEqual(400)
        expect(res.body).not.toContain('"gp"')
      }),
      { numRuns: RUNS },
    )
    // The first workspace's records are as they were.
    const app = await send('GET', '/v1/applications/guarded')
    expect(app.statusCode).toBe(200)
    expect(app.json().description).not.toBe('taken over')
  })

  it('stays up with bounded memory after all of it', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' })
    expect(res.statusCode).toBe(200)
    expect(process.memoryUsage().rss).toBeLessThan(1024 * 1024 * 1024)
  })
})

/** Query values of any length and magnitude, as the client would write them. */
const extremeLimit = fc.oneof(
  fc.integer({ min: -5, max: 300 }).map(String),
  fc.integer({ min: 1, max: 6000 }).map((n) => `1${'0'.repeat(n)}`),
  fc.integer({ min: 1, max: 6000 }).map((n) => `-${'9'.repeat(n)}`),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.double().map(String),
  fc.constantFrom(
    '1e309',
    '-1e309',
    '1e2',
    '-0',
    '0',
    '00050',
    '1.0',
    '1.5',
    '0x10',
    '0b11',
    'Infinity',
    'NaN',
  ),
  fc.constantFrom('', ' 5', '5 ', '+5', '9007199254740993', '٣', '５'),
  nastyString,
)
const cursorOf = (position: unknown, version = 1) =>
  Buffer.from(JSON.stringify({ v: version, p: position })).toString('base64url')
const extremeCursor = fc.oneof(
  nastyString,
  fc.integer({ min: 400, max: 6000 }).map((n) => 'A'.repeat(n)),
  fc.constantFrom(
    cursorOf(1e308),
    cursorOf(-1),
    cursorOf(1.5),
    cursorOf(null),
    cursorOf('x'.repeat(300)),
    cursorOf(''),
    cursorOf(1, 2),
    cursorOf(Number.MAX_SAFE_INTEGER),
    cursorOf('bot'),
    '1e309',
    '%',
  ),
)

/** As a client library would encode it; a lone surrogate as the replacement character. */
const queryEncode = (value: string) => {
  try {
    return encodeURIComponent(value)
  } catch {
    return percentEncode(value)
  }
}

/** `limit` as the schema allows it: decimal digits of a value from 1 to 200. */
const validLimit = (text: string) => /^-?[0-9]+$/.test(text) && BigInt(text) >= 1n && BigInt(text) <= 200n

describe.each(STORE_KINDS)('query values of any length and magnitude on every list route (%s)', (kind) => {
  let t: TestApp
  let lists: string[]
  beforeAll(async () => {
    t = await createTestApp(kind, { RATE_LIMIT_PER_MINUTE: '0' })
    await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'bot', name: 'Bot', description: '' },
    })
    await t.request({
      method: 'POST',
      url: '/v1/applications/bot/policies',
      payload: { id: 'p1', rules: [{ type: 'relevance' }], target: ['output'] },
    })
    // Every GET operation of the document that takes ?limit=, with its path filled in.
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>>
    }
    lists = Object.entries(doc.paths)
      .filter(([, ops]) => ops.get?.parameters?.some((p) => p.in === 'query' && p.name === 'limit'))
      .map(([path]) => path.replace('{application_id}', 'bot').replace('{policy_id}', 'p1'))
  })
  afterAll(async () => {
    await t.close()
  })

  it('finds the list routes', () => {
    expect(lists).toEqual(
      expect.arrayContaining([
        '/v1/applications',
        '/v1/applications/bot/policies',
        '/v1/applications/bot/policies/p1/revisions',
        '/v1/api-keys',
      ]),
    )
  })

  it('answers 200, or 422 pointing at the parameter, never 500', async () => {
    const params = fc.array(
      fc.oneof(fc.tuple(fc.constant('limit'), extremeLimit), fc.tuple(fc.constant('cursor'), extremeCursor)),
      { maxLength: 3 },
    )
    await fc.assert(
      fc.asyncProperty(fc.nat(), params, async (which, query) => {
        const route = lists[which % lists.length]
        const url = `${route}?${query.map(([k, v]) => `${k}=${queryEncode(v)}`).join('&')}`
        const res = await t.request({ method: 'GET', url })
        if (url.length > MAX_TARGET_BYTES) {
          expect(res.statusCode).toBe(414)
          expect(res.json().code).toBe('uri_too_long')
          return
        }
        const limits = query.filter(([k]) => k === 'limit').map(([, v]) => v)
        const cursors = query.filter(([k]) => k === 'cursor')
        const limitOk = limits.length === 0 || (limits.length === 1 && validLimit(limits[0] ?? ''))
        if (res.statusCode === 200) {
          expect(limitOk, `${url}: ${res.body.slice(0, 200)}`).toBe(true)
          expect(cursors.length).toBeLessThanOrEqual(1)
          return
        }
        expect(res.statusCode, `${url.slice(0, 300)}: ${res.body.slice(0, 300)}`).toBe(422)
        expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/)
        const pointers = (res.json().errors as { pointer: string }[]).map((e) => e.pointer)
        expect(pointers.length).toBeGreaterThan(0)
        for (const pointer of pointers) expect(['#/query/limit', '#/query/cursor']).toContain(pointer)
        if (!limitOk) expect(pointers).toContain('#/query/limit')
        if (limitOk && cursors.length === 0) throw new Error(`${url}: a valid limit refused`)
      }),
      { numRuns: RUNS },
    )
  })
})

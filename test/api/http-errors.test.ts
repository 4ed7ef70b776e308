import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientErrorProblem, MAX_TARGET_BYTES } from '../../src/http/client-errors.js'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'

describe.each(STORE_KINDS)('errors outside the schema (%s)', (kind) => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp(kind)
  })
  afterAll(async () => {
    await t.close()
  })

  const post = (body: string, contentType?: string, url = '/v1/applications') =>
    t.request({
      method: 'POST',
      url,
      body,
      headers: contentType === undefined ? {} : { 'content-type': contentType },
    })

  it('answers 400 malformed_request for JSON that does not parse', async () => {
    const body = problem(await post('{"name": "x",', 'application/json'), 400, 'malformed_request')
    expect(body.type).toBe('/problems/malformed-request')
    expect(body.detail).toMatch(/not valid JSON/)
  })

  it('answers 400 for an empty JSON body', async () => {
    problem(await post('', 'application/json'), 400, 'malformed_request')
  })

  it.each([
    '[]',
    '"text"',
    '42',
    'null',
    'true',
  ])('answers 400 for a body that is JSON but not an object: %s', async (raw) => {
    const body = problem(await post(raw, 'application/json'), 400, 'malformed_request')
    expect(body.detail).toBe('The request body must be a JSON object')
  })

  it('answers 400 for a __proto__ key rather than letting it reach the code', async () => {
    problem(
      await post('{"name":"x","description":"","__proto__":{"admin":true}}', 'application/json'),
      400,
      'malformed_request',
    )
  })

  it('treats a constructor.prototype key as malformed too', async () => {
    problem(
      await post('{"name":"x","description":"","constructor":{"prototype":{"a":1}}}', 'application/json'),
      400,
      'malformed_request',
    )
  })

  it.each([
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/xml',
    'multipart/form-data; boundary=x',
  ])('answers 415 for a body of type %s', async (type) => {
    problem(await post('{"name":"x","description":""}', type), 415, 'unsupported_media_type')
  })

  it('answers 415 for a body without a content type', async () => {
    problem(await post('{"name":"x","description":""}'), 415, 'unsupported_media_type')
  })

  it('accepts application/merge-patch+json on PATCH only', async () => {
    const body = problem(
      await post('{"name":"x","description":""}', 'application/merge-patch+json'),
      415,
      'unsupported_media_type',
    )
    expect(body.detail).toContain('PATCH')
  })

  it('accepts a charset parameter and any case of the media type', async () => {
    expect((await post('{"name":"x","description":""}', 'application/json; charset=utf-8')).statusCode).toBe(
      201,
    )
    expect((await post('{"name":"x","description":""}', 'Application/JSON')).statusCode).toBe(201)
  })

  it('answers 413 for a body over 1 MiB and accepts one just under', async () => {
    const over = JSON.stringify({ name: 'x', description: 'd'.repeat(1_048_576) })
    const body = problem(await post(over, 'application/json'), 413, 'payload_too_large')
    expect(body.detail).toContain('1 MiB')
    // 1 MiB exactly is allowed: it fails validation (description too long), not the size check.
    const exact = `{"name":"x","description":"${'d'.repeat(1_048_576 - 30)}"}`
    expect(Buffer.byteLength(exact)).toBeLessThanOrEqual(1_048_576)
    expect((await post(exact, 'application/json')).statusCode).toBe(422)
  })

  it('answers 404 for an unknown path, with or without a key', async () => {
    problem(await t.request({ method: 'GET', url: '/v1/nothing' }), 404, 'not_found')
    problem(await t.request({ method: 'GET', url: '/v1/nothing', key: null }), 404, 'not_found')
    problem(await t.request({ method: 'POST', url: '/v2/applications', key: null }), 404, 'not_found')
    const plain = problem(await t.request({ method: 'GET', url: '/v1/nothing' }), 404, 'not_found')
    expect('error' in plain).toBe(false)
  })

  it('answers 404 with OpenAI’s error member below an application, where OpenAI’s SDKs call', async () => {
    const body: { error?: unknown; code: string } = problem(
      await t.request({ method: 'POST', url: '/v1/applications/support/embeddings', payload: {} }),
      404,
      'not_found',
    )
    expect(body.error).toEqual({
      message: 'No route POST /v1/applications/support/embeddings',
      type: 'not_found',
      param: null,
      code: 'not_found',
    })
  })

  it('answers 405 with Allow for a known path and a wrong method', async () => {
    const res = await t.request({ method: 'PUT', url: '/v1/applications' })
    problem(res, 405, 'method_not_allowed')
    expect(res.headers.allow).toContain('POST')
    const ops = await t.request({ method: 'POST', url: '/healthz', key: null })
    problem(ops, 405, 'method_not_allowed')
    expect(ops.headers.allow).toBe('GET, HEAD')
    const policies = await t.request({ method: 'DELETE', url: '/v1/applications/x/policies', key: null })
    problem(policies, 405, 'method_not_allowed')
    expect(policies.headers.allow).toContain('POST')
  })

  it('answers problem+json for a path that is not valid percent-encoding', async () => {
    for (const url of ['/v1/applications/%ff%fe', '/v1/applications/%zz/policies', '/%']) {
      const body = problem(await t.request({ method: 'GET', url }), 404, 'not_found')
      expect(body.detail).toBe('The request path is not a valid URL')
    }
  })

  it('bounds JSON nesting: half a million levels inside 1 MiB answer 422, not a crash', async () => {
    const depth = 500_000
    const arrays = `{"name":${'['.repeat(depth)}${']'.repeat(depth)},"description":""}`
    const objects = `{"name":"x","description":"","parameters":${'{"a":'.repeat(depth / 5)}1${'}'.repeat(depth / 5)}}`
    for (const body of [arrays, objects]) {
      const res = await post(body, 'application/json')
      problem(res, 422, 'validation_error')
    }
    // The same body with an Idempotency-Key is refused before anything walks it.
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications',
      body: objects,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'deep' },
    })
    problem(res, 422, 'validation_error')
  })

  it('answers 414 for a request target over 8 KiB, and closes the connection', async () => {
    const url = '/healthz?'.padEnd(MAX_TARGET_BYTES + 1, 'a')
    const res = await t.request({ method: 'GET', url, key: null })
    const body = problem(res, 414, 'uri_too_long')
    expect(body.type).toBe('/problems/uri-too-long')
    expect(res.headers.connection).toBe('close')
    // One byte less is served, and authentication comes after the length.
    expect((await t.request({ method: 'GET', url: url.slice(0, -1), key: null })).statusCode).toBe(200)
    problem(
      await t.request({ method: 'GET', url: `/v1/applications?${'a'.repeat(9000)}`, key: null }),
      414,
      'uri_too_long',
    )
  })

  it.each([
    ['1'.padEnd(5001, '0'), 'must be at most 200'],
    ['9'.repeat(400), 'must be at most 200'],
    [`-${'9'.repeat(400)}`, 'must be at least 1'],
    ['1e309', 'must be an integer'],
    ['Infinity', 'must be an integer'],
    ['1e2', 'must be an integer'],
    ['1.0', 'must be an integer'],
    ['0x10', 'must be an integer'],
    ['%205', 'must be an integer'],
    ['', 'must be an integer'],
    ['-0', 'must be at least 1'],
    ['201', 'must be at most 200'],
  ])('answers 422 #/query/limit for ?limit=%s on every list route', async (limit, detail) => {
    await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'lim', name: 'L', description: '' },
    })
    await t.request({
      method: 'POST',
      url: '/v1/applications/lim/policies',
      payload: { id: 'p', rules: [{ type: 'relevance' }], target: ['output'] },
    })
    for (const route of [
      '/v1/applications',
      '/v1/applications/lim/policies',
      '/v1/applications/lim/policies/p/revisions',
      '/v1/api-keys',
    ]) {
      const body = problem(
        await t.request({ method: 'GET', url: `${route}?limit=${limit}` }),
        422,
        'validation_error',
      )
      expect(body.errors).toEqual([{ pointer: '#/query/limit', detail }])
    }
  })

  it('reads ?limit= as decimal digits, leading zeros included', async () => {
    const res = await t.request({
      method: 'GET',
      url: '/v1/applications?limit=0000000000000000000000000000007',
    })
    expect(res.statusCode).toBe(200)
    problem(
      await t.request({ method: 'GET', url: '/v1/applications?limit=1&limit=2' }),
      422,
      'validation_error',
    )
  })

  it.each([
    ['1e309', 'must be an integer'],
    ['0x1', 'must be an integer'],
    ['99999999999999999999', 'must be at most 9007199254740991'],
  ])('answers 422 #/path/revision for a revision number %s', async (n, detail) => {
    await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'rev', name: 'R', description: '' },
    })
    await t.request({
      method: 'POST',
      url: '/v1/applications/rev/policies',
      payload: { id: 'p', rules: [{ type: 'relevance' }], target: ['output'] },
    })
    const body = problem(
      await t.request({ method: 'GET', url: `/v1/applications/rev/policies/p/revisions/${n}` }),
      422,
      'validation_error',
    )
    expect(body.errors).toEqual([{ pointer: '#/path/revision', detail }])
  })

  it.each([
    '',
    'x'.repeat(513),
    Buffer.from('{"v":1,"p":1e309}').toString('base64url'),
    Buffer.from('{"v":1,"p":-1}').toString('base64url'),
    Buffer.from(JSON.stringify({ v: 1, p: 'x'.repeat(200) })).toString('base64url'),
    '%ff%fe',
  ])('answers 422 #/query/cursor for a cursor this API did not issue: %s', async (cursor) => {
    const body = problem(
      await t.request({ method: 'GET', url: `/v1/applications?cursor=${cursor}` }),
      422,
      'validation_error',
    )
    expect(body.errors?.map((e) => e.pointer)).toEqual(['#/query/cursor'])
  })

  it('tolerates a trailing slash', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications/',
      payload: { name: 'slash', description: '' },
    })
    expect(res.statusCode).toBe(201)
    expect((await t.request({ method: 'GET', url: '/healthz/', key: null })).statusCode).toBe(200)
  })

  it('echoes a sane X-Request-Id and replaces an unsafe one', async () => {
    const kept = await t.request({
      method: 'GET',
      url: '/healthz',
      key: null,
      headers: { 'x-request-id': 'trace-42.a:b' },
    })
    expect(kept.headers['x-request-id']).toBe('trace-42.a:b')
    const replaced = await t.request({
      method: 'GET',
      url: '/healthz',
      key: null,
      headers: { 'x-request-id': `bad id ${'x'.repeat(300)}` },
    })
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    const generated = await t.request({ method: 'GET', url: '/nope', key: null })
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    expect(generated.json().request_id).toBe(generated.headers['x-request-id'])
  })

  it('sends API-appropriate headers and no X-Powered-By', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { name: 'h', description: '' },
    })
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers['x-powered-by']).toBeUndefined()
  })

  it('never shows internals in an error', async () => {
    const responses = [
      await post('{"name":', 'application/json'),
      await post('{}', 'application/json'),
      await t.request({ method: 'GET', url: '/v1/x' }),
    ]
    for (const res of responses) {
      expect(res.body).not.toMatch(/node_modules|\/src\/|at .*\(|SQLITE|select |insert /i)
    }
  })
})

describe.each(STORE_KINDS)('an unexpected failure (%s)', (kind) => {
  it('answers 500 problem+json with the request id and no internal detail', async () => {
    const t = await createTestApp(kind)
    try {
      await t.request({
        method: 'POST',
        url: '/v1/applications',
        payload: { id: 'bot', name: 'B', description: '' },
      })
      await t.request({
        method: 'POST',
        url: '/v1/applications/bot/policies',
        payload: { id: 'p', rules: [{ type: 'relevance' }], target: ['output'] },
      })
      // Break the store under the running app: the revisions table disappears, and a change
      // to the policy can no longer keep the version it replaces.
      await sql`drop table policy_revisions`.execute(t.store.db)
      const res = await t.request({
        method: 'PATCH',
        url: '/v1/applications/bot/policies/p',
        payload: { target: ['input'] },
      })
      const body = problem(res, 500, 'internal_error')
      expect(body.detail).toMatch(/request id/)
      expect(res.body).not.toMatch(
        /policy_revisions|relation|no such table|SQLITE|select |insert |\/src\/|node_modules/i,
      )
    } finally {
      await t.close()
    }
  })
})

describe('answers to what the HTTP parser refuses', () => {
  const parserError = (code: string, fields: Record<string, unknown> = {}) =>
    Object.assign(new Error(code), { code, ...fields })

  it('tells an over-long request line from over-large headers', () => {
    const target = Buffer.from(`GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)
    expect(
      clientErrorProblem(parserError('HPE_HEADER_OVERFLOW', { rawPacket: target, bytesParsed: 20_005 })).code,
    ).toBe('uri_too_long')
    const header = Buffer.from(`GET / HTTP/1.1\r\nHost: x\r\nX: ${'a'.repeat(20_000)}\r\n\r\n`)
    const tooLarge = clientErrorProblem(
      parserError('HPE_HEADER_OVERFLOW', { rawPacket: header, bytesParsed: 20_029 }),
    )
    expect([tooLarge.code, tooLarge.status]).toEqual(['headers_too_large', 431])
    expect(clientErrorProblem(parserError('HPE_HEADER_OVERFLOW')).code).toBe('headers_too_large')
  })

  it.each([
    ['ERR_HTTP_REQUEST_TIMEOUT', 408, 'request_timeout'],
    ['HPE_PAUSED_H2_UPGRADE', 400, 'malformed_request'],
    ['HPE_INVALID_HEADER_TOKEN', 400, 'malformed_request'],
    ['HPE_UNEXPECTED_CONTENT_LENGTH', 400, 'malformed_request'],
    ['HPE_SOMETHING_NEW', 400, 'malformed_request'],
  ])('answers %s with %i %s', (code, status, expected) => {
    const answer = clientErrorProblem(parserError(code, { reason: 'Some reason' }))
    expect([answer.status, answer.code]).toEqual([status, expected])
    expect(answer.detail).not.toMatch(/HPE_|ERR_/)
  })
})

import { readFileSync } from 'node:fs'
import { connect } from 'node:net'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROBLEMS } from '../../src/errors.js'
import { type RunningServer, startServer } from '../helpers/process.js'
import { freshStoreConfig, type TestStoreConfig } from '../helpers/stores.js'

// Hostile bytes on a raw socket to a real `warden serve`: whatever arrives, every answer is a
// well-formed HTTP/1.1 response, never a 5xx, and every 4xx is problem+json with a documented
// code. `FUZZ_RUNS=5000` for a long run.

/** Generated cases; FUZZ_RUNS raises it for a long run. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 300)
/** Generated cases sent at once, each on its own connection. */
const CONCURRENT = 50
const ADMIN = 'protocol-fuzz-admin-secret-0123456789abcdef'
const AUTH = `Authorization: Bearer ${ADMIN}`
const LIST_ROUTES = [
  '/v1/applications',
  '/v1/applications/bot/policies',
  '/v1/applications/bot/policies/p1/revisions',
  '/v1/api-keys',
]

/** The codes the error table of docs/conventions.md documents, with their status. */
const DOCUMENTED = new Map(
  [
    ...readFileSync(new URL('../../docs/conventions.md', import.meta.url), 'utf8').matchAll(
      /^\|\s*(\d{3})\s*\|\s*`([a-z_]+)`/gm,
    ),
  ].map((m) => [m[2] as string, Number(m[1])]),
)

interface RawResponse {
  status: number
  headers: Map<string, string>
  body: string
}

/**
 * Splits what a server sent into responses. `complete` is false when bytes are left that do not
 * make a whole response; a status line that is not HTTP/1.1 throws.
 */
function parseResponses(data: Buffer, closed: boolean): { responses: RawResponse[]; complete: boolean } {
  const responses: RawResponse[] = []
  let at = 0
  while (at < data.length) {
    const headEnd = data.indexOf('\r\n\r\n', at)
    if (headEnd < 0) return { responses, complete: false }
    const [statusLine = '', ...lines] = data.subarray(at, headEnd).toString('latin1').split('\r\n')
    const match = /^HTTP\/1\.1 ([1-5]\d\d)(?: |$)/.exec(statusLine)
    if (!match) throw new Error(`not an HTTP/1.1 status line: ${JSON.stringify(statusLine.slice(0, 200))}`)
    const status = Number(match[1])
    const headers = new Map<string, string>()
    for (const line of lines) {
      const colon = line.indexOf(':')
      if (colon <= 0) throw new Error(`malformed response header: ${JSON.stringify(line)}`)
      headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim())
    }
    let bodyStart = headEnd + 4
    if (status < 200) {
      at = bodyStart
      continue
    }
    let body: Buffer
    const length = headers.get('content-length')
    if (length !== undefined) {
      const end = bodyStart + Number(length)
      if (end > data.length) return { responses, complete: false }
      body = data.subarray(bodyStart, end)
      at = end
    } else if (headers.get('transfer-encoding') === 'chunked') {
      const chunks: Buffer[] = []
      for (;;) {
        const lineEnd = data.indexOf('\r\n', bodyStart)
        if (lineEnd < 0) return { responses, complete: false }
        const size = Number.parseInt(data.subarray(bodyStart, lineEnd).toString('latin1'), 16)
        if (Number.isNaN(size)) throw new Error('malformed chunk size in a response')
        if (lineEnd + 2 + size + 2 > data.length) return { responses, complete: false }
        chunks.push(data.subarray(lineEnd + 2, lineEnd + 2 + size))
        bodyStart = lineEnd + 2 + size + 2
        if (size === 0) break
      }
      body = Buffer.concat(chunks)
      at = bodyStart
    } else if (status === 204 || status === 304) {
      body = Buffer.alloc(0)
      at = bodyStart
    } else {
      if (!closed) return { responses, complete: false }
      body = data.subarray(bodyStart)
      at = data.length
    }
    responses.push({ status, headers, body: body.toString('utf8') })
  }
  return { responses, complete: true }
}

interface Exchange {
  responses: RawResponse[]
  complete: boolean
}

/**
 * Sends `input` on a new connection (and, with `end`, closes the client's side after it) and
 * collects what the server sends until `expected` responses have arrived whole or the server
 * closes the connection. Nothing here waits for time: a server that neither answers nor closes
 * (it closes idle and half-sent requests itself, REQUEST_TIMEOUT_SECONDS) fails at the test's
 * timeout.
 */
function exchange(port: number, input: Buffer, expected: number, end = false): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    let finished = false
    const finish = (closed: boolean) => {
      if (finished) return
      finished = true
      socket.destroy()
      resolve(parseResponses(Buffer.concat(chunks), closed))
    }
    socket.on('connect', () => (end ? socket.end(input) : socket.write(input)))
    socket.on('data', (chunk) => {
      chunks.push(chunk)
      const sofar = parseResponses(Buffer.concat(chunks), false)
      if (sofar.complete && sofar.responses.length >= expected) finish(false)
    })
    socket.on('error', () => finish(true))
    socket.on('close', () => finish(true))
  })
}

/** The invariants every exchange keeps; returns the responses. */
function check(input: Buffer, result: Exchange): RawResponse[] {
  const shown = JSON.stringify(input.subarray(0, 300).toString('latin1'))
  expect(result.complete, `a partial response to ${shown}`).toBe(true)
  if (/[^\r\n]/.test(input.toString('latin1')))
    expect(result.responses.length, `no answer to ${shown}`).toBeGreaterThan(0)
  result.responses.forEach((res, i) => {
    const what = `response ${i} to ${shown}: ${res.status} ${res.body.slice(0, 300)}`
    expect(res.status, what).toBeLessThan(500)
    if (res.status >= 400) {
      expect(res.headers.get('content-type'), what).toMatch(/^application\/problem\+json/)
      const body = JSON.parse(res.body)
      expect(body.status, what).toBe(res.status)
      expect(DOCUMENTED.get(body.code), `${what}: code not in the table of docs/conventions.md`).toBe(
        res.status,
      )
      expect(PROBLEMS[body.code as keyof typeof PROBLEMS]?.status, what).toBe(res.status)
      expect(typeof body.title, what).toBe('string')
      expect(typeof body.detail, what).toBe('string')
      expect(body.type, what).toBe(`/problems/${body.code.replace(/_/g, '-')}`)
      expect(body.request_id, what).toBe(res.headers.get('x-request-id'))
    }
    // Nothing is answered on a connection after an answer that closes it.
    if (res.headers.get('connection') === 'close')
      expect(i, `${what}: answers after Connection: close`).toBe(result.responses.length - 1)
  })
  return result.responses
}

const request = (head: string, body = '') => Buffer.from(`${head}\r\n\r\n${body}`, 'latin1')

interface NamedCase {
  name: string
  input: Buffer
  /** Statuses of the answers, in order; the last one's code when it is an error. */
  statuses: number[]
  code?: string
  requests?: number
  /** The client closes its side after sending: the server answers what it has. */
  end?: boolean
}

const NAMED: NamedCase[] = [
  {
    name: 'a header line without a colon',
    input: request('GET /healthz HTTP/1.1\r\nHost: x\r\nBadHeader'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'a space before the colon',
    input: request('GET /healthz HTTP/1.1\r\nHost : x'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'bare LF line endings',
    input: Buffer.from('GET /healthz HTTP/1.1\nHost: x\n\n'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'bare CR line endings',
    input: Buffer.from('GET /healthz HTTP/1.1\rHost: x\r\r'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'conflicting Content-Length headers',
    input: request(
      'POST /v1/applications HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6',
      'hello!',
    ),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'Content-Length with Transfer-Encoding',
    input: request(
      'POST /v1/applications HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked',
      '0\r\n\r\n',
    ),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'a Content-Length that is not a number',
    input: request('POST /v1/applications HTTP/1.1\r\nHost: x\r\nContent-Length: 1e3'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'a Transfer-Encoding other than chunked',
    input: request('POST /v1/applications HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'an invalid chunk size',
    input: request(
      `POST /v1/applications HTTP/1.1\r\nHost: x\r\n${AUTH}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked`,
      'zz\r\n{}\r\n0\r\n\r\n',
    ),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'a chunk size that overflows',
    input: request(
      `POST /v1/applications HTTP/1.1\r\nHost: x\r\n${AUTH}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked`,
      'ffffffffffffffffffff\r\n',
    ),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'an HTTP/2 preface',
    input: Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'HTTP/1.1 without Host',
    input: request('GET /healthz HTTP/1.1'),
    statuses: [400],
    code: 'malformed_request',
  },
  { name: 'HTTP/1.0 without Host is served', input: request('GET /healthz HTTP/1.0'), statuses: [200] },
  {
    name: 'a control character in a header value',
    input: request('GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'a NUL in a header value',
    input: request('GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'a non-ASCII header value (obs-text) is served',
    input: request('GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: caf\u00e9'),
    statuses: [200],
  },
  {
    name: 'a non-ASCII key is refused as a key',
    input: request(`GET /v1/applications HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer caf\u00e9`),
    statuses: [401],
    code: 'unauthenticated',
  },
  {
    name: 'a non-ASCII request target',
    input: request('GET /caf\u00e9 HTTP/1.1\r\nHost: x'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'a NUL in the request target',
    input: request('GET /heal\u0000thz HTTP/1.1\r\nHost: x'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'an unknown method',
    input: request('GETT /healthz HTTP/1.1\r\nHost: x'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'a request line that is not one',
    input: request('hello'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'an unknown HTTP version',
    input: request('GET /healthz HTTP/9.9\r\nHost: x'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'a space inside the target',
    input: request('GET /a b HTTP/1.1\r\nHost: x'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'an obsolete folded header',
    input: request('GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'CONNECT',
    input: request('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443'),
    statuses: [400],
    code: 'malformed_request',
  },
  {
    name: 'a header over 16 KiB',
    input: request(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}`),
    statuses: [431],
    code: 'headers_too_large',
  },
  {
    name: '3000 headers',
    input: request(
      `GET /healthz HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: v`).join('\r\n')}`,
    ),
    statuses: [431],
    code: 'headers_too_large',
  },
  {
    name: 'a 9 KiB request target',
    input: request(`GET /healthz?${'a'.repeat(9000)} HTTP/1.1\r\nHost: x`),
    statuses: [414],
    code: 'uri_too_long',
  },
  {
    name: 'a 20 KiB request target',
    input: request(`GET /healthz?${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x`),
    statuses: [414],
    code: 'uri_too_long',
  },
  {
    name: 'an 8 KiB request target is served',
    input: request(`GET /healthz?${'a'.repeat(8000)} HTTP/1.1\r\nHost: x`),
    statuses: [200],
  },
  {
    name: 'an Expect other than 100-continue',
    input: request(
      `POST /v1/applications HTTP/1.1\r\nHost: x\r\n${AUTH}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: teapot`,
      '{}',
    ),
    statuses: [417],
    code: 'expectation_failed',
  },
  {
    name: 'Expect: 100-continue is honoured',
    input: request(
      `POST /v1/applications HTTP/1.1\r\nHost: x\r\n${AUTH}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue`,
      '{}',
    ),
    statuses: [422],
    code: 'validation_error',
  },
  {
    name: 'a request cut off in its headers',
    input: Buffer.from('GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: b'),
    statuses: [400],
    code: 'malformed_request',
    end: true,
  },
  {
    name: 'a body shorter than its Content-Length',
    input: request(
      `POST /v1/applications HTTP/1.1\r\nHost: x\r\n${AUTH}\r\nContent-Type: application/json\r\nContent-Length: 50`,
      '{"name":',
    ),
    statuses: [400],
    code: 'malformed_request',
    end: true,
  },
  {
    name: 'three pipelined requests',
    input: Buffer.concat([
      request('GET /healthz HTTP/1.1\r\nHost: x'),
      request('GET /nope HTTP/1.1\r\nHost: x'),
      request(`GET /v1/applications?limit=2 HTTP/1.1\r\nHost: x\r\n${AUTH}`),
    ]),
    statuses: [200, 404, 200],
    requests: 3,
  },
  {
    name: 'a malformed request pipelined after good ones',
    input: Buffer.concat([
      request(`GET /v1/applications HTTP/1.1\r\nHost: x\r\n${AUTH}`),
      request('GET /healthz HTTP/1.1\r\nHost: x'),
      request('GET /healthz HTTP/1.1\r\nBad'),
    ]),
    statuses: [200, 200, 400],
    code: 'malformed_request',
    requests: 3,
  },
  {
    name: 'a CONNECT pipelined after a good request',
    input: Buffer.concat([
      request('GET /healthz HTTP/1.1\r\nHost: x'),
      request('CONNECT x:1 HTTP/1.1\r\nHost: x'),
    ]),
    statuses: [200, 400],
    code: 'malformed_request',
    requests: 2,
  },
  {
    name: 'nothing after an answer that closes the connection',
    input: Buffer.concat([
      request('GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: teapot'),
      request('CONNECT x:1 HTTP/1.1\r\nHost: x'),
      request('GET /healthz HTTP/1.1'),
    ]),
    statuses: [417],
    code: 'expectation_failed',
    requests: 3,
  },
  ...LIST_ROUTES.flatMap((route) => [
    {
      name: `${route}?limit= and 5000 digits`,
      input: request(`GET ${route}?limit=1${'0'.repeat(5000)} HTTP/1.1\r\nHost: x\r\n${AUTH}`),
      statuses: [422],
      code: 'validation_error',
    },
    {
      name: `${route}?limit=1e309`,
      input: request(`GET ${route}?limit=1e309 HTTP/1.1\r\nHost: x\r\n${AUTH}`),
      statuses: [422],
      code: 'validation_error',
    },
  ]),
]

const bytes = (maxLength: number) =>
  fc.uint8Array({ maxLength }).map((b) => Buffer.from(b).toString('latin1'))
const token = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,12}$/)
const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 40,
})
/** Query values of any length and magnitude. */
const queryValue = fc.oneof(
  fc.integer({ min: -5, max: 300 }).map(String),
  fc.integer({ min: 1, max: 5000 }).map((n) => `1${'0'.repeat(n)}`),
  fc.constantFrom(
    '1e309',
    '-0',
    '1.5',
    '1.0',
    '0x10',
    'Infinity',
    'NaN',
    '',
    '9007199254740993',
    '%20',
    '+5',
  ),
  fc.double().map(String),
  printable.map(encodeURIComponent),
)

const method = fc.oneof(
  { weight: 20, arbitrary: fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS') },
  { weight: 1, arbitrary: fc.constantFrom('get', 'CONNECT', 'PRI', 'TRACE') },
  { weight: 1, arbitrary: token },
  { weight: 1, arbitrary: bytes(8) },
)
const target = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '/healthz',
      '/readyz',
      '/v1/applications',
      '/v1/applications/bot',
      '/v1/applications/bot/policies/p1/revisions/1',
      '/nope',
      '*',
      'http://x/healthz',
    ),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.constantFrom(...LIST_ROUTES),
        fc.array(fc.tuple(fc.constantFrom('limit', 'cursor'), queryValue), { maxLength: 3 }),
      )
      .map(([route, params]) => `${route}?${params.map(([k, v]) => `${k}=${v}`).join('&')}`),
  },
  { weight: 1, arbitrary: bytes(40).map((s) => `/${s}`) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 7000, max: 20_000 }).map((n) => `/healthz?${'a'.repeat(n)}`),
  },
)
const version = fc.oneof(
  { weight: 8, arbitrary: fc.constant('HTTP/1.1') },
  {
    weight: 1,
    arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.2', 'http/1.1', 'HTTP/11', ''),
  },
)
const eol = fc.oneof(
  { weight: 10, arbitrary: fc.constant('\r\n') },
  { weight: 1, arbitrary: fc.constantFrom('\n', '\r', '\r\r\n') },
)
const headerValue = fc.oneof(
  { weight: 8, arbitrary: printable },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'close',
      'keep-alive',
      'teapot',
      'websocket',
      `Bearer ${ADMIN}`,
      'application/json',
      'caf\u00e9',
    ),
  },
  { weight: 1, arbitrary: bytes(30) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 20_000 }).map((n) => 'v'.repeat(n)) },
)
const header = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .tuple(fc.constantFrom('X-Request-Id', 'Accept', 'Connection', 'Upgrade', 'Content-Type'), headerValue)
      .map(([name, value]) => `${name}: ${value}`),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom('Authorization', 'Expect'), headerValue)
      .map(([name, value]) => `${name}: ${value}`),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(token, headerValue).map(([name, value]) => `${name}: ${value}`),
  },
  { weight: 1, arbitrary: fc.tuple(bytes(10), bytes(20)).map(([n, v]) => `${n}: ${v}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('NoColon', 'Name : value', ' Leading: space', 'X-A: a\r\n folded'),
  },
)
/** Host, and the admin key so that most requests reach the routes. */
const host = fc.oneof(
  { weight: 8, arbitrary: fc.constant(`Host: x\r\n${AUTH}`) },
  { weight: 1, arbitrary: fc.constantFrom('', 'Host: x\r\nHost: y', 'Host:', 'Host: caf\u00e9') },
)
const manyHeaders = fc.oneof(
  { weight: 9, arbitrary: fc.constant('') },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 50, max: 3000 })
      .map((n) => Array.from({ length: n }, (_, i) => `X-H${i}: v\r\n`).join('')),
  },
)
/** The body and the headers that frame it. */
const framing = fc.oneof(
  { weight: 6, arbitrary: fc.constant('|') },
  {
    weight: 4,
    arbitrary: fc
      .oneof(printable, fc.constantFrom('{"name":"f","description":""}', '{}', '[]', '{"id":"x y","name":1}'))
      .map((b) => `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(b)}|${b}`),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'Content-Type: application/json\r\nTransfer-Encoding: chunked|2\r\n{}\r\n0\r\n\r\n',
      'Content-Length: 2\r\nTransfer-Encoding: chunked|0\r\n\r\n',
      'Content-Length: 2\r\nContent-Length: 3|{}',
      'Content-Length: -1|',
      'Content-Length: 1e3|',
      'Content-Length: 99999999999999999999|',
      'Transfer-Encoding: gzip|',
      'Transfer-Encoding: chunked|zz\r\n',
      'Transfer-Encoding: chunked, gzip|',
      'Content-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue|{}',
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'Content-Type: application/json\r\nContent-Length: 40|{"name"',
      'Content-Type: application/json\r\nTransfer-Encoding: chunked|5\r\n{}',
    ),
  },
)
const oneRequest = fc
  .tuple(method, target, version, eol, host, fc.array(header, { maxLength: 4 }), manyHeaders, framing)
  .map(([m, t, v, nl, h, hs, many, frame]) => {
    const [frameHeaders = '', body = ''] = frame.split(/\|(.*)/s)
    const lines = [`${m} ${t} ${v}`, h, ...hs, many, frameHeaders].filter((line) => line !== '')
    return `${lines.join(nl).replace(/\r\n/g, nl)}${nl}${nl}${body}`
  })
const generatedCase = fc.oneof(
  { weight: 6, arbitrary: oneRequest.map((r) => [r]) },
  { weight: 2, arbitrary: fc.array(oneRequest, { minLength: 2, maxLength: 4 }) },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        bytes(200),
        fc.constantFrom('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', '\u0016\u0003\u0001\u0000\u00a5\u0001\u0000'),
      )
      .map((text) => [text]),
  },
)

describe('the HTTP/1.1 listener under hostile bytes', () => {
  let store: TestStoreConfig
  let server: RunningServer
  beforeAll(async () => {
    store = await freshStoreConfig('sqlite')
    server = await startServer({
      ...store.env,
      WARDEN_ADMIN_KEY: ADMIN,
      RATE_LIMIT_PER_MINUTE: '0',
      REQUEST_TIMEOUT_SECONDS: '2',
    })
    const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }
    await fetch(`${server.url}/v1/applications`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ id: 'bot', name: 'Bot', description: '' }),
    })
    await fetch(`${server.url}/v1/applications/bot/policies`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ id: 'p1', rules: [{ type: 'relevance' }], target: ['output'] }),
    })
  })
  afterAll(async () => {
    await server.stop()
    await store.drop()
  })

  it('documents every code the server can send', () => {
    for (const [code, { status }] of Object.entries(PROBLEMS)) expect(DOCUMENTED.get(code), code).toBe(status)
  })

  it.each(NAMED)('$name', async ({ input, statuses, code, requests = 1, end = false }) => {
    const responses = check(input, await exchange(server.port, input, requests, end))
    expect(responses.map((r) => r.status)).toEqual(statuses)
    const last = responses[responses.length - 1]
    if (code && last) {
      expect(JSON.parse(last.body).code).toBe(code)
      if (code === 'validation_error') {
        const pointers = JSON.parse(last.body).errors.map((e: { pointer: string }) => e.pointer)
        if (/limit=/.test(input.toString('latin1'))) expect(pointers).toEqual(['#/query/limit'])
      }
    }
    // Errors found by the parser, or before routing, close the connection.
    if (last && [400, 414, 417, 431].includes(last.status) && code !== 'validation_error')
      expect(last.headers.get('connection')).toBe('close')
  })

  it('answers 408 problem+json to headers that never finish, and closes', async () => {
    // The client sends part of a request and waits: the server must answer and close on its own.
    const data = await new Promise<Buffer>((resolve) => {
      const socket = connect(server.port, '127.0.0.1', () =>
        socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n'),
      )
      const chunks: Buffer[] = []
      socket.on('data', (chunk) => chunks.push(chunk))
      socket.on('error', () => {})
      socket.on('close', () => resolve(Buffer.concat(chunks)))
    })
    const responses = check(Buffer.from('GET'), parseResponses(data, true))
    expect(responses.map((r) => r.status)).toEqual([408])
    expect(JSON.parse(responses[0]?.body ?? '{}').code).toBe('request_timeout')
  })

  it(`answers every generated case well (${RUNS} cases)`, async () => {
    const seen = new Map<string, number>()
    let answers = 0
    // Cases run CONCURRENT at a time, each on its own connection: a case the server answers only
    // when it gives up on it (a request never finished, REQUEST_TIMEOUT_SECONDS) waits beside the
    // others rather than after them.
    await fc.assert(
      fc.asyncProperty(
        fc.array(generatedCase, { minLength: CONCURRENT, maxLength: CONCURRENT }),
        async (cases) => {
          const inputs = cases.map((requests) => Buffer.from(requests.join(''), 'latin1'))
          // Nothing but line breaks is nothing to answer: the client then closes its side, and
          // the server closes the connection (it never closes one that sent nothing).
          const results = await Promise.all(
            inputs.map((input, i) =>
              exchange(server.port, input, cases[i]?.length ?? 0, !/[^\r\n]/.test(input.toString('latin1'))),
            ),
          )
          results.forEach((result, i) => {
            for (const res of check(inputs[i] as Buffer, result)) {
              const kind =
                res.status >= 400 ? `${res.status} ${JSON.parse(res.body).code}` : String(res.status)
              seen.set(kind, (seen.get(kind) ?? 0) + 1)
              answers++
            }
          })
        },
      ),
      { numRuns: Math.ceil(RUNS / CONCURRENT) },
    )
    // A long run says what it reached.
    if (process.env.FUZZ_RUNS)
      console.info(`${RUNS} cases, ${answers} answers:`, Object.fromEntries([...seen].sort()))
  }, 600_000)

  it('is still up and serving afterwards', async () => {
    const res = await fetch(`${server.url}/healthz`)
    expect(res.status).toBe(200)
    expect(server.proc.exitCode).toBeNull()
  })
})

import { randomUUID } from 'node:crypto'
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import type { ConnectionError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'
import { setStandardHeaders } from './headers.js'
import { PROBLEM_CONTENT_TYPE, problemDocument, render } from './problem.js'
import { requestId } from './request-id.js'

// Answers to requests that never reach a route: Node's HTTP parser rejects them (a malformed
// request line or header, conflicting framing, headers over the size limit, a request that
// took too long to arrive), or Node answers them itself (an `Expect` it does not know, CONNECT,
// HTTP/1.1 without Host). Each is problem+json like every other error, and then the connection
// closes: after a parse error nothing more on it can be read reliably.

/** The longest request target served, in bytes (RFC 9112 asks servers to take at least 8000). */
export const MAX_TARGET_BYTES = 8192

/** How long a connection answered by the parser stays open for the client to read the answer. */
const LINGER_MS = 1000

/**
 * The error Node hands to `clientError`: parser errors carry the chunk they stopped in
 * (a Buffer, whatever Fastify's type says) and how far into it they got.
 */
type ClientError = Omit<ConnectionError, 'rawPacket' | 'bytesParsed'> & {
  reason?: string
  bytesParsed?: number
  rawPacket?: unknown
}

const invalid = (detail: string) => new AppError('malformed_request', detail)

/** What each llhttp error means for the client, in the client's terms. */
const PARSER_ERRORS: Record<string, string> = {
  HPE_INVALID_METHOD: 'The request line does not start with a known HTTP method',
  HPE_INVALID_URL: 'The request target holds a character that must be percent-encoded',
  HPE_INVALID_CONSTANT: 'The request line is not "METHOD target HTTP/1.1"',
  HPE_INVALID_VERSION: 'The request line is not "METHOD target HTTP/1.1" ended by CRLF',
  HPE_INVALID_HEADER_TOKEN: 'A header line is not "name: value" of allowed characters ended by CRLF',
  HPE_LF_EXPECTED: 'A line of the request is not ended by CRLF',
  HPE_CR_EXPECTED: 'A line of the request is not ended by CRLF',
  HPE_UNEXPECTED_CONTENT_LENGTH:
    'The body length is given twice: Content-Length repeated, or sent with Transfer-Encoding',
  HPE_INVALID_CONTENT_LENGTH: 'Content-Length is not one decimal number of bytes',
  HPE_INVALID_TRANSFER_ENCODING: 'Transfer-Encoding must end with chunked and come without Content-Length',
  HPE_INVALID_CHUNK_SIZE: 'The chunked body is not valid',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'The chunked body is not valid',
  HPE_INVALID_EOF_STATE: 'The connection ended before the request was complete',
}

/** True when the parser overflowed while still reading the request line. */
function overflowedInRequestLine(error: ClientError): boolean {
  const raw = error.rawPacket
  const at = error.bytesParsed
  if (!Buffer.isBuffer(raw) || at === undefined) return false
  const parsed = raw.subarray(0, at)
  if (parsed.includes(0x0a)) return false
  // The overflowing span ended at the space before the HTTP version, or this chunk starts the
  // request and no line ended before the overflow. A target spread over several TCP segments
  // whose last one holds neither cannot be told from a long header value: it answers 431.
  return raw[at] === 0x20 || /^[A-Za-z]+ /.test(parsed.subarray(0, 32).toString('latin1'))
}

/** The problem a client error is answered with. */
export function clientErrorProblem(error: ClientError): AppError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return overflowedInRequestLine(error)
        ? new AppError('uri_too_long', `The request target is longer than ${MAX_TARGET_BYTES} bytes`)
        : new AppError(
            'headers_too_large',
            'The request line and headers are larger than the server accepts (16 KiB)',
          )
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('request_timeout', 'The request did not arrive in time')
    case 'HPE_PAUSED_H2_UPGRADE':
      return invalid('HTTP/2 is not served on this port; send HTTP/1.1')
  }
  const known = error.code ? PARSER_ERRORS[error.code] : undefined
  const reason = error.reason ? ` (${error.reason})` : ''
  return invalid(`${known ?? 'The request is not valid HTTP/1.1'}${reason}`)
}

/** A whole HTTP/1.1 answer, for a connection no response object exists for. */
function rawAnswer(error: AppError, id: string): string {
  const body = JSON.stringify(problemDocument(error, id))
  return [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}`,
    `Content-Type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${id}`,
    'X-Content-Type-Options: nosniff',
    `Date: ${new Date().toUTCString()}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n')
}

/**
 * Writes the answer and closes. Closing at once while the client is still sending would reset
 * the connection, which can destroy the answer before the client reads it; the client gets
 * `LINGER_MS` to read it and close first.
 */
function answerAndClose(socket: Duplex, answer: string): void {
  socket.end(answer)
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref()
  socket.once('close', () => clearTimeout(timer))
}

/**
 * The responses of each connection still open, in the order of their requests (Node writes
 * pipelined answers in that order): the server's `request` event adds each (and
 * `expectationFailed` its own), and each leaves when it closes, after its connection has been
 * ended where it asked for that.
 */
const responses = new WeakMap<Duplex, Set<ServerResponse>>()

function trackResponse(request: IncomingMessage, response: ServerResponse): void {
  const open = responses.get(request.socket)
  if (open === undefined) responses.set(request.socket, new Set([response]))
  else open.add(response)
  response.on('close', forgetResponse)
}

function forgetResponse(this: ServerResponse): void {
  responses.get(this.req.socket)?.delete(this)
}

/**
 * Runs `then` once the answers to the complete requests before this point on the connection
 * have been written: a pipelined request that breaks the parser is answered after them, in
 * order, instead of ahead of them. `then` gets the response still being written, if any: the
 * one whose request the parser stopped in.
 */
function afterEarlierAnswers(socket: Duplex, then: (inFlight: ServerResponse | null) => void): void {
  const inFlight: ServerResponse | null = responses.get(socket)?.values().next().value ?? null
  if (inFlight === null || !inFlight.req.complete) {
    then(inFlight)
    return
  }
  inFlight.once('close', () => afterEarlierAnswers(socket, then))
}

const answered = new WeakSet<Duplex>()

/**
 * The server's `clientErrorHandler`: Node's parser rejected what arrived on `socket`, or the
 * request took too long to arrive. Answers problem+json and closes the connection.
 */
export function clientErrorHandler(
  this: FastifyInstance,
  connectionError: ConnectionError,
  socket: Duplex,
): void {
  const error = connectionError as ClientError
  // A parser that failed fails again on every later chunk; the first error is the one answered.
  if (answered.has(socket)) return
  answered.add(socket)
  if (socket.destroyed || !error.code || !/^(HPE_|ERR_HTTP_REQUEST_TIMEOUT$)/.test(error.code)) {
    // A connection reset or another socket error: there is no one to answer.
    socket.destroy()
    return
  }
  const problem = clientErrorProblem(error)
  const id = randomUUID()
  this.log.debug({ reqId: id, code: error.code, reason: error.reason }, 'client error')
  afterEarlierAnswers(socket, (inFlight) => {
    // Half of another answer is already on the wire: nothing can follow it.
    if (!socket.writable || inFlight?.headersSent) socket.destroy()
    else answerAndClose(socket, rawAnswer(problem, id))
  })
}

/** `Expect` other than 100-continue: Node would answer 417 without a body. */
function expectationFailed(request: IncomingMessage, response: ServerResponse): void {
  // Node emits no `request` for it: this answer is tracked here.
  trackResponse(request, response)
  const id = requestId(request)
  const problem = new AppError(
    'expectation_failed',
    'The only expectation served is Expect: 100-continue; send the request without Expect',
  )
  const body = JSON.stringify(problemDocument(problem, id))
  response.writeHead(problem.status, {
    'content-type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
    'content-length': Buffer.byteLength(body),
    'x-request-id': id,
    'x-content-type-options': 'nosniff',
    connection: 'close',
  })
  response.end(body)
}

/** CONNECT: Node would close the connection without a word. Warden is not a proxy. */
function connectRefused(request: IncomingMessage, socket: Duplex): void {
  const problem = invalid('CONNECT is not served: this is an API, not a proxy')
  const id = requestId(request)
  // A CONNECT pipelined behind other requests is answered after them, and not at all when one
  // of their answers closed the connection.
  afterEarlierAnswers(socket, () => {
    if (socket.writable) answerAndClose(socket, rawAnswer(problem, id))
    else socket.destroy()
  })
}

/**
 * What Node's HTTP server checks before Fastify sees a request, answered through the same
 * problem rendering: a request target over `MAX_TARGET_BYTES` (414) and an HTTP/1.1 request
 * without Host (400; the server is built with `requireHostHeader: false` so that Node leaves
 * it to this step). Both close the connection.
 */
function checkRequest(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const raw = request.raw
  let problem: AppError | undefined
  if (raw.url !== undefined && raw.url.length > MAX_TARGET_BYTES)
    problem = new AppError('uri_too_long', `The request target is longer than ${MAX_TARGET_BYTES} bytes`)
  else if (raw.headers.host === undefined && raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1)
    problem = invalid('An HTTP/1.1 request needs a Host header')
  if (problem === undefined) {
    done()
    return
  }
  setStandardHeaders(request, reply)
  reply.header('connection', 'close')
  render(request, reply, problem)
}

/**
 * Installs the answers to protocol errors that do not reach the error handler. Call it before
 * any other onRequest hook, so that its checks come first. The `clientErrorHandler` and
 * `http.requireHostHeader: false` server options go with it.
 */
export function installClientErrors(app: FastifyInstance): void {
  // Before Fastify's own listener, so that a response is known before it can be written.
  app.server.prependListener('request', trackResponse)
  app.server.on('checkExpectation', expectationFailed)
  app.server.on('connect', connectRefused)
  app.addHook('onRequest', checkRequest)
}

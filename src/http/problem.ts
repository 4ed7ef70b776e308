import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError, type ErrorCode, type FieldError, PROBLEMS } from '../errors.js'
import type { OpenAIError } from '../schemas/chat-completions.js'
import type { Problem } from '../schemas/common.js'
import { StoreUnavailableError } from '../store/errors.js'
import { setStandardHeaders } from './headers.js'
import { MAX_FIELD_ERRORS, toFieldErrors } from './validation.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Problems on this route also carry OpenAI's `error` member (the OpenAI-compatible route). */
    openaiErrors?: boolean
  }
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

/** Seconds a client should wait before retrying while the store is down. */
const UNAVAILABLE_RETRY_AFTER = '2'

/**
 * Errors raised while a body was still arriving, whose rest is read and dropped (body-budget.ts):
 * their answer keeps the connection open, as a 413's does.
 */
export const refusedWhileArriving = new WeakSet<Error>()

/** The RFC 9457 document for an error, under the request id it is answered with. */
export function problemDocument(error: AppError, requestId: string): Problem {
  const problem: Problem = {
    type: `/problems/${error.code.replace(/_/g, '-')}`,
    title: PROBLEMS[error.code].title,
    status: error.status,
    detail: error.detail,
    code: error.code,
    request_id: requestId,
  }
  if (error.errors) problem.errors = error.errors.slice(0, MAX_FIELD_ERRORS)
  if (error.extensions?.failures) problem.failures = error.extensions.failures
  return problem
}

/**
 * A problem in OpenAI's error format, which OpenAI's SDKs read: they show `message` and expose
 * `type`, `param` and `code`.
 */
export function openaiError(problem: Problem): OpenAIError {
  return {
    message: problem.detail,
    type: problem.code,
    param: problem.errors?.[0]?.pointer ?? null,
    code: problem.code,
  }
}

/** Sends an error as application/problem+json, with the headers it asks for. */
export function render(
  request: FastifyRequest,
  reply: FastifyReply,
  error: AppError,
  openai = request.routeOptions.config?.openaiErrors === true,
): FastifyReply {
  const document = problemDocument(error, String(request.id))
  const problem = openai ? { ...document, error: openaiError(document) } : document
  if (error.headers) reply.headers(error.headers)
  if (error.code === 'payload_too_large' || refusedWhileArriving.has(error)) {
    // Fastify closes the connection here, and a socket closed while the client is still
    // uploading is reset, which can destroy the 413 before the client reads it. Keeping the
    // connection lets Node discard the rest of the body unbuffered (bounded by the request
    // timeout) while the client finishes sending and reads the answer.
    reply.removeHeader('connection')
  }
  if (error.code === 'unavailable' && !reply.hasHeader('retry-after'))
    reply.header('retry-after', UNAVAILABLE_RETRY_AFTER)
  return reply.code(error.status).type(PROBLEM_CONTENT_TYPE).send(problem)
}

const byFastifyCode: Record<string, { code: ErrorCode; detail: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: 'unsupported_media_type',
    detail: 'Send the body as JSON with Content-Type: application/json',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    code: 'malformed_request',
    detail: 'The request body is empty; send a JSON object',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: 'malformed_request',
    detail: 'The Content-Length header does not match the body',
  },
  FST_ERR_BAD_URL: { code: 'not_found', detail: 'The request path is not a valid URL' },
}

/**
 * The 422 (or 400, for a body that is not a JSON object) for a schema failure; `more`, when
 * given, adds what else a refused body is known to get wrong (a route's own checks, run through
 * Fastify's `attachValidation`: rule-errors.ts), after the schema's errors and at other pointers.
 */
export function validationProblem(error: FastifyError, more?: () => FieldError[]): AppError {
  const validation = error.validation ?? []
  const context = error.validationContext ?? 'body'
  const notAnObject =
    context === 'body' &&
    validation.some((e) => e.instancePath === '' && (e.keyword === 'type' || e.keyword === 'nullable'))
  if (notAnObject) return new AppError('malformed_request', 'The request body must be a JSON object')
  const errors: FieldError[] = toFieldErrors(validation as never, context)
  if (more) {
    const reported = new Set(errors.map((e) => e.pointer))
    for (const e of more()) if (!reported.has(e.pointer)) errors.push(e)
  }
  const where =
    context === 'body' ? 'the request body' : context === 'querystring' ? 'the query string' : 'the path'
  const first = errors[0]
  const detail =
    errors.length === 1 && first
      ? `${first.pointer} ${first.detail}`
      : `${errors.length} problems in ${where}`
  return new AppError('validation_error', detail, errors)
}

/** A byte count as people read it: whole MiB or KiB when it is one, bytes otherwise. */
export function formatBytes(bytes: number): string {
  if (bytes % 1_048_576 === 0) return `${bytes / 1_048_576} MiB`
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`
  return `${bytes} bytes`
}

/** Turns any error — ours, a schema failure, Fastify's own, the store's — into one AppError. */
export function toAppError(error: FastifyError | AppError | Error, request: FastifyRequest): AppError {
  if (error instanceof AppError) {
    // Its detail tells the client what failed; the cause goes to the log only.
    if (error.code === 'internal_error') request.log.error({ err: error.cause ?? error }, 'internal error')
    return error
  }
  const fastifyError = error as FastifyError
  if (fastifyError.validation) return validationProblem(fastifyError)
  if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    const limit = request.routeOptions.bodyLimit
    return new AppError(
      'payload_too_large',
      `The request body is larger than this route's limit of ${formatBytes(limit)} (${limit} bytes)`,
    )
  }
  const known = fastifyError.code ? byFastifyCode[fastifyError.code] : undefined
  if (known) return new AppError(known.code, known.detail)
  if (error instanceof SyntaxError || fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    // The parser's message names the position (or a forbidden __proto__ key); it holds no internals.
    return new AppError('malformed_request', `The request body is not valid JSON: ${error.message}`)
  }
  if (error instanceof StoreUnavailableError) {
    request.log.warn({ err: error }, 'store unavailable')
    return new AppError('unavailable', 'The store is unavailable; retry shortly')
  }
  const status = fastifyError.statusCode ?? 500
  if (status === 429) return new AppError('rate_limited', error.message)
  if (status >= 400 && status < 500) {
    const code =
      (Object.keys(PROBLEMS) as ErrorCode[]).find((c) => PROBLEMS[c].status === status) ?? 'malformed_request'
    return new AppError(code, error.message)
  }
  request.log.error({ err: error }, 'unexpected error')
  return new AppError(
    'internal_error',
    'An unexpected error occurred; quote the request id when reporting it',
  )
}

/**
 * Errors Fastify raises before routing (a path that is not valid percent-encoding) bypass the
 * error handler; they take this constructor option, and the same rendering.
 */
export function frameworkErrorHandler(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  // No hook has run yet, so the headers every answer carries are set here.
  setStandardHeaders(request, reply)
  render(request, reply, toAppError(error, request))
}

/** The path of a URL, cut to a length fit for an error message. */
function shortPath(url: string): string {
  const path = url.split('?')[0] ?? ''
  return path.length > 200 ? `${path.slice(0, 200)}…` : path
}

/** A path below an application, where OpenAI's SDKs call: `/v1/applications/{id}/…`. */
const OPENAI_BASE = /^\/v1\/applications\/[^/?]+\/[^?]/

/** One error path: every failure leaves as application/problem+json. */
export function installProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => render(request, reply, toAppError(error as Error, request)))
  app.setNotFoundHandler((request, reply) =>
    render(
      request,
      reply,
      new AppError('not_found', `No route ${request.method} ${shortPath(request.url)}`),
      // An OpenAI SDK given an application as its base URL calls paths below it that Warden
      // does not serve (embeddings, files, …): it reads OpenAI's `error` member, not the problem.
      OPENAI_BASE.test(request.url),
    ),
  )
}

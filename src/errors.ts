/** The one error type services throw; the HTTP layer renders it as problem+json. */

export type ErrorCode =
  | 'malformed_request'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'conflict'
  | 'tests_failed'
  | 'precondition_failed'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'unsupported_media_type'
  | 'expectation_failed'
  | 'validation_error'
  | 'rate_limited'
  | 'headers_too_large'
  | 'internal_error'
  | 'upstream_error'
  | 'unavailable'
  | 'upstream_timeout'

export interface FieldError {
  /** JSON Pointer into the body, or `#/query/...`, `#/path/...`. */
  pointer: string
  detail: string
}

/** Problem members beyond the standard ones; each is declared in ProblemSchema. */
export interface ProblemExtensions {
  /** On 409 tests_failed: the failing results of the policy's test run. */
  failures?: unknown[]
}

export const PROBLEMS: Record<ErrorCode, { status: number; title: string }> = {
  malformed_request: { status: 400, title: 'Request is malformed' },
  unauthenticated: { status: 401, title: 'Authentication required' },
  forbidden: { status: 403, title: 'Not allowed' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  request_timeout: { status: 408, title: 'Request timeout' },
  conflict: { status: 409, title: 'Conflict' },
  tests_failed: { status: 409, title: 'Policy tests failed' },
  precondition_failed: { status: 412, title: 'Precondition failed' },
  payload_too_large: { status: 413, title: 'Request body is too large' },
  uri_too_long: { status: 414, title: 'Request target is too long' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  expectation_failed: { status: 417, title: 'Expectation failed' },
  validation_error: { status: 422, title: 'Request is invalid' },
  rate_limited: { status: 429, title: 'Too many requests' },
  headers_too_large: { status: 431, title: 'Request headers are too large' },
  internal_error: { status: 500, title: 'Internal error' },
  upstream_error: { status: 502, title: 'The model provider failed' },
  unavailable: { status: 503, title: 'Service unavailable' },
  upstream_timeout: { status: 504, title: 'The model provider did not answer in time' },
}

export class AppError extends Error {
  override name = 'AppError'
  readonly status: number

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly errors?: FieldError[],
    /** Extra response headers, such as `Allow` or `Retry-After`. */
    readonly headers?: Record<string, string>,
    /** Extra members of the problem document (RFC 9457 extensions), such as a test run's `failures`. */
    readonly extensions?: ProblemExtensions,
  ) {
    super(detail)
    this.status = PROBLEMS[code].status
  }
}

export const notFound = (detail: string) => new AppError('not_found', detail)
export const conflict = (detail: string) => new AppError('conflict', detail)

/** A 422 with one or more field errors. */
export function invalid(errors: FieldError[], detail?: string): AppError {
  const first = errors[0]
  const summary =
    detail ??
    (errors.length === 1 && first
      ? `${first.pointer || 'body'} ${first.detail}`
      : `${errors.length} problems in the request`)
  return new AppError('validation_error', summary, errors)
}

/** Escapes one JSON Pointer reference token (RFC 6901). */
export function pointerToken(token: string | number): string {
  return String(token).replace(/~/g, '~0').replace(/\//g, '~1')
}

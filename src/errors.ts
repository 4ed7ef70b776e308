/** The one error type services throw; the HTTP layer renders it as problem+json. */

export type ErrorCode =
  | 'malformed_request'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'precondition_failed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'validation_error'
  | 'rate_limited'
  | 'internal_error'
  | 'unavailable'

export interface FieldError {
  /** JSON Pointer into the body, or `#/query/...`, `#/path/...`. */
  pointer: string
  detail: string
}

export const PROBLEMS: Record<ErrorCode, { status: number; title: string }> = {
  malformed_request: { status: 400, title: 'Request body is malformed' },
  unauthenticated: { status: 401, title: 'Authentication required' },
  forbidden: { status: 403, title: 'Not allowed' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  precondition_failed: { status: 412, title: 'Precondition failed' },
  payload_too_large: { status: 413, title: 'Request body is too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  validation_error: { status: 422, title: 'Request is invalid' },
  rate_limited: { status: 429, title: 'Too many requests' },
  internal_error: { status: 500, title: 'Internal error' },
  unavailable: { status: 503, title: 'Service unavailable' },
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

import { AppError } from '../../errors.js'

/**
 * Evaluates `If-Match` (RFC 9110 §13.1.1) against the current entity tag, with the strong
 * comparison it requires: weak tags never match. No header means no precondition.
 */
export function ifMatchHolds(header: string | undefined, etag: string): boolean {
  if (header === undefined) return true
  const value = header.trim()
  if (value === '*') return true
  return value
    .split(',')
    .map((tag) => tag.trim())
    .some((tag) => tag === `"${etag}"`)
}

export function assertIfMatch(header: string | undefined, etag: string): void {
  if (!ifMatchHolds(header, etag)) {
    throw new AppError(
      'precondition_failed',
      'If-Match does not match the current ETag; read the resource again',
    )
  }
}

export const preconditionFailed = () =>
  new AppError('precondition_failed', 'The resource changed since it was read; read it again and retry')

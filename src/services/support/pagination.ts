import { AppError } from '../../errors.js'
import { pageJson } from '../../store/documents.js'
import type { DocumentPage } from '../../store/statements.js'

export interface Page<T> {
  data: T[]
  next_cursor: string | null
}

const CURSOR_VERSION = 1

/** Cursors are opaque to clients: a versioned position, base64url-encoded. */
export function encodeCursor(position: number | string): string {
  return Buffer.from(JSON.stringify({ v: CURSOR_VERSION, p: position })).toString('base64url')
}

const badCursor = () =>
  new AppError('validation_error', 'The cursor is not one this API issued', [
    {
      pointer: '#/query/cursor',
      detail: 'is not a cursor this API issued; pass next_cursor from the previous page',
    },
  ])

function parseCursor(cursor: string): unknown {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      v?: unknown
      p?: unknown
    }
    return parsed.v === CURSOR_VERSION ? parsed.p : undefined
  } catch {
    return undefined
  }
}

/** A numeric position (a sequence or revision number), or null for the first page. */
export function decodeCursor(cursor: string | undefined): number | null {
  if (cursor === undefined) return null
  const position = parseCursor(cursor)
  if (typeof position === 'number' && Number.isSafeInteger(position) && position >= 0) return position
  throw badCursor()
}

/** A textual position (an id), or null for the first page. */
export function decodeTextCursor(cursor: string | undefined): string | null {
  if (cursor === undefined) return null
  const position = parseCursor(cursor)
  if (typeof position === 'string' && position.length > 0 && position.length <= 128) return position
  throw badCursor()
}

/**
 * Builds a page from rows fetched with `limit + 1`: the extra row only tells whether another
 * page exists.
 */
export function toPage<R, T>(
  rows: R[],
  limit: number,
  position: (row: R) => number | string,
  map: (row: R) => T,
): Page<T> {
  const more = rows.length > limit
  const pageRows = more ? rows.slice(0, limit) : rows
  const last = pageRows[pageRows.length - 1]
  return {
    data: pageRows.map(map),
    next_cursor: more && last !== undefined ? encodeCursor(position(last)) : null,
  }
}

/** A page of stored JSON texts as the answer's JSON text. */
export const documentPage = (page: DocumentPage): string =>
  pageJson(page.docs, page.last === null ? null : encodeCursor(page.last))

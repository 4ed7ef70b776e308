import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { AppError } from '../../src/errors.js'
import {
  decodeCursor,
  decodeTextCursor,
  documentPage,
  encodeCursor,
  toPage,
} from '../../src/services/support/pagination.js'

/**
 * Any code point, lone surrogates included: fast-check's own 'binary' unit does as much, but took
 * over a second to build here, most of this tier's time.
 */
const anyCodePoint = fc.integer({ min: 0, max: 0x10ffff }).map((code) => String.fromCodePoint(code))

/** A cursor with any JSON inside, as someone forging one would build it. */
const forged = (content: unknown) => Buffer.from(JSON.stringify(content)).toString('base64url')
const raw = (text: string) => Buffer.from(text).toString('base64url')

/** Runs `decode` and returns what it threw, failing the test if it returned. */
function rejection(decode: () => unknown): AppError {
  try {
    decode()
  } catch (error) {
    if (error instanceof AppError) return error
    throw error
  }
  throw new Error('expected the cursor to be refused')
}

const expectRefused = (decode: () => unknown) => {
  const error = rejection(decode)
  expect(error.code).toBe('validation_error')
  expect(error.status).toBe(422)
  expect(error.errors).toEqual([{ pointer: '#/query/cursor', detail: expect.stringMatching(/next_cursor/) }])
}

describe('cursors', () => {
  it('are URL-safe text that reads as nothing in particular', () => {
    expect(encodeCursor(50)).toBe('eyJ2IjoxLCJwIjo1MH0')
    expect(encodeCursor('support-bot')).toMatch(/^[A-Za-z0-9_-]+$/)
  })

  it('mean the first page when absent', () => {
    expect(decodeCursor(undefined)).toBeNull()
    expect(decodeTextCursor(undefined)).toBeNull()
  })

  it('decode to the numeric position they were made from', () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), (position) => {
        expect(decodeCursor(encodeCursor(position))).toBe(position)
      }),
    )
  })

  it('decode to the textual position they were made from, up to 128 characters of any text', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ minLength: 1, maxLength: 128 }),
          fc.string({ minLength: 1, maxLength: 32, unit: anyCodePoint }),
        ),
        (position) => {
          fc.pre(position.length <= 128)
          expect(decodeTextCursor(encodeCursor(position))).toBe(position)
        },
      ),
    )
    const longest = 'a'.repeat(128)
    expect(decodeTextCursor(encodeCursor(longest))).toBe(longest)
  })

  it.each([
    ['not base64 at all', '!!!'],
    ['empty', ''],
    ['base64 of text that is not JSON', raw('hello')],
    ['base64 of truncated JSON', raw('{"v":1,"p":5')],
    ['JSON null', raw('null')],
    ['a bare number', raw('5')],
    ['an array', raw('[1,5]')],
    ['no version', forged({ p: 5 })],
    ['another version', forged({ v: 2, p: 5 })],
    ['the version as text', forged({ v: '1', p: 5 })],
    ['no position', forged({ v: 1 })],
    ['a null position', forged({ v: 1, p: null })],
    ['a negative position', forged({ v: 1, p: -1 })],
    ['a fractional position', forged({ v: 1, p: 1.5 })],
    ['a position past 2^53', forged({ v: 1, p: 2 ** 53 })],
    ['a position of a thousand digits', raw(`{"v":1,"p":${'9'.repeat(1000)}}`)],
    ['a textual position', encodeCursor('50')],
  ])('refuse as a numeric position: %s', (_name, cursor) => {
    expectRefused(() => decodeCursor(cursor))
  })

  it.each([
    ['not base64 at all', '!!!'],
    ['base64 of text that is not JSON', raw('hello')],
    ['another version', forged({ v: 2, p: 'a' })],
    ['an empty position', encodeCursor('')],
    ['a position of 129 characters', encodeCursor('a'.repeat(129))],
    ['a position of ten thousand characters', encodeCursor('a'.repeat(10_000))],
    ['a numeric position', encodeCursor(50)],
    ['an object position', forged({ v: 1, p: { id: 'a' } })],
  ])('refuse as a textual position: %s', (_name, cursor) => {
    expectRefused(() => decodeTextCursor(cursor))
  })

  it('refuse a cursor whose position was edited', () => {
    const issued = encodeCursor(50)
    const edited = raw(Buffer.from(issued, 'base64url').toString('utf8').replace('50', '-50'))
    expectRefused(() => decodeCursor(edited))
  })

  it('either decode to a valid position or answer 422, whatever text is sent', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.base64String(), fc.string({ unit: anyCodePoint })), (cursor) => {
        for (const decode of [decodeCursor, decodeTextCursor]) {
          try {
            const position = decode(cursor)
            expect(typeof position === 'number' || typeof position === 'string').toBe(true)
          } catch (error) {
            expect(error).toBeInstanceOf(AppError)
            expect((error as AppError).code).toBe('validation_error')
          }
        }
      }),
    )
  })
})

describe('toPage', () => {
  const rows = [{ seq: 3 }, { seq: 7 }, { seq: 9 }]
  const page = (fetched: typeof rows, limit: number) =>
    toPage(
      fetched,
      limit,
      (row) => row.seq,
      (row) => row.seq * 10,
    )

  it('uses the extra row fetched only to know that another page exists', () => {
    const first = page(rows, 2)
    expect(first.data).toEqual([30, 70])
    expect(first.next_cursor).not.toBeNull()
    expect(decodeCursor(first.next_cursor ?? undefined)).toBe(7)
  })

  it('ends the list when no extra row came back', () => {
    expect(page(rows, 3)).toEqual({ data: [30, 70, 90], next_cursor: null })
    expect(page(rows, 200)).toEqual({ data: [30, 70, 90], next_cursor: null })
    expect(page([], 50)).toEqual({ data: [], next_cursor: null })
  })

  it('makes textual cursors from textual positions', () => {
    const result = toPage(
      [{ id: 'a' }, { id: 'b' }],
      1,
      (row) => row.id,
      (row) => row,
    )
    expect(result.data).toEqual([{ id: 'a' }])
    expect(decodeTextCursor(result.next_cursor ?? undefined)).toBe('a')
  })
})

describe('documentPage', () => {
  it('joins stored documents into one page, with a cursor after the last one', () => {
    const text = documentPage({ docs: ['{"id":"a"}', '{"id":"b"}'], last: 12 })
    const parsed = JSON.parse(text)
    expect(parsed.data).toEqual([{ id: 'a' }, { id: 'b' }])
    expect(decodeCursor(parsed.next_cursor)).toBe(12)
    expect(documentPage({ docs: [], last: null })).toBe('{"data":[],"next_cursor":null}')
  })
})

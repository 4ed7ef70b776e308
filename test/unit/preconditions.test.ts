import { describe, expect, it } from 'vitest'
import { AppError } from '../../src/errors.js'
import { assertIfMatch, ifMatchHolds, preconditionFailed } from '../../src/services/support/preconditions.js'

const ETAG = '3f1c9a0e5b7d4c2a8e6f1b3d5a7c9e0f'

describe('If-Match (RFC 9110 section 13.1.1)', () => {
  it('holds when the header is absent: no precondition was asked for', () => {
    expect(ifMatchHolds(undefined, ETAG)).toBe(true)
  })

  it('holds for *, with or without surrounding white space', () => {
    expect(ifMatchHolds('*', ETAG)).toBe(true)
    expect(ifMatchHolds('  *\t', ETAG)).toBe(true)
  })

  it('holds for the current tag, quoted, alone or anywhere in a list', () => {
    expect(ifMatchHolds(`"${ETAG}"`, ETAG)).toBe(true)
    expect(ifMatchHolds(` "${ETAG}" `, ETAG)).toBe(true)
    expect(ifMatchHolds(`"older", "${ETAG}"`, ETAG)).toBe(true)
    expect(ifMatchHolds(`"${ETAG}","older"`, ETAG)).toBe(true)
    expect(ifMatchHolds(`"a" ,\t"${ETAG}" , "b"`, ETAG)).toBe(true)
  })

  it('fails for other tags', () => {
    expect(ifMatchHolds('"older"', ETAG)).toBe(false)
    expect(ifMatchHolds('"older", "oldest"', ETAG)).toBe(false)
    expect(ifMatchHolds(`"${ETAG.toUpperCase()}"`, ETAG)).toBe(false)
    expect(ifMatchHolds(`"${ETAG}x"`, ETAG)).toBe(false)
  })

  it('fails for a weak tag, even the current one: If-Match compares strongly', () => {
    expect(ifMatchHolds(`W/"${ETAG}"`, ETAG)).toBe(false)
    expect(ifMatchHolds(`w/"${ETAG}"`, ETAG)).toBe(false)
    expect(ifMatchHolds(`W/"${ETAG}", "older"`, ETAG)).toBe(false)
    expect(ifMatchHolds(`W/"${ETAG}", "${ETAG}"`, ETAG)).toBe(true)
  })

  it.each([
    ['an empty value', ''],
    ['white space only', '   '],
    ['an unquoted tag', ETAG],
    ['a tag quoted on one side', `"${ETAG}`],
    ['single quotes', `'${ETAG}'`],
    ['a tag inside a longer quoted string', `"x ${ETAG}"`],
    ['* inside a list', `*, "older"`],
    ['a quoted *', '"*"'],
    ['an empty list', ' , ,'],
  ])('fails for a malformed header: %s', (_name, header) => {
    expect(ifMatchHolds(header, ETAG)).toBe(false)
  })

  it('assertIfMatch throws 412 precondition_failed when the header does not hold, and nothing otherwise', () => {
    expect(() => assertIfMatch(undefined, ETAG)).not.toThrow()
    expect(() => assertIfMatch(`"${ETAG}"`, ETAG)).not.toThrow()
    const error = (() => {
      try {
        assertIfMatch('"older"', ETAG)
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(AppError)
    expect(error).toMatchObject({ code: 'precondition_failed', status: 412 })
    expect((error as AppError).detail).toMatch(/read the resource again/)
  })

  it('preconditionFailed is a 412 for a write that lost a race after the check', () => {
    expect(preconditionFailed()).toMatchObject({ code: 'precondition_failed', status: 412 })
  })
})

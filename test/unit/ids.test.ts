import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ApplicationIdParam, ID_PATTERN } from '../../src/schemas/common.js'

/**
 * Any code point, lone surrogates included: fast-check's own 'binary' unit does as much, but took
 * over a second to build here, most of this tier's time.
 */
const anyCodePoint = fc.integer({ min: 0, max: 0x10ffff }).map((code) => String.fromCodePoint(code))

/** Compiled as Ajv compiles schema patterns in Warden: with the `u` flag. */
const idPattern = new RegExp(ID_PATTERN, 'u')
const isId = (text: string) => idPattern.test(text)

/** Client-chosen ids (docs/conventions.md) in words: 1–128 unreserved URL characters, not starting with '.' or '~'. */
const UNRESERVED = /^[A-Za-z0-9._~-]*$/
const contractSays = (text: string) =>
  text.length >= 1 && text.length <= 128 && UNRESERVED.test(text) && !/^[.~]/.test(text)

describe('client-chosen ids', () => {
  it('is the pattern the id schemas use', () => {
    expect((ApplicationIdParam as { pattern?: string }).pattern).toBe(ID_PATTERN)
  })

  it.each([
    ['one letter', 'a'],
    ['one digit', '7'],
    ['an underscore', '_'],
    ['a hyphen', '-'],
    ['a typical id', 'support-bot'],
    ['mixed case', 'Support_Bot-2'],
    ['a dot inside', 'v1.2'],
    ['dots after the first character', 'a..'],
    ['a dot at the end', 'x.'],
    ['a tilde inside', 'a~b'],
    ['a tilde after a hyphen', '-~'],
    ['a UUIDv7', '0195f3c8-7d2a-7b7e-9a51-2c1f4d3e8a90'],
    ['128 characters', 'a'.repeat(128)],
    ['128 characters of every kind', `_${'a.~-Z9'.repeat(21)}x`],
  ])('accepts %s', (_name, id) => {
    expect(id.length).toBeLessThanOrEqual(128)
    expect(isId(id)).toBe(true)
  })

  it.each([
    ['the empty string', ''],
    ['.', '.'],
    ['..', '..'],
    ['a leading dot', '.hidden'],
    ['a leading tilde', '~'],
    ['a leading tilde before a name', '~user'],
    ['129 characters', 'a'.repeat(129)],
    ['a space', 'a b'],
    ['a slash', 'a/b'],
    ['a backslash', 'a\\b'],
    ['a percent escape', 'a%2Fb'],
    ['a colon', 'a:b'],
    ['a plus', 'a+b'],
    ['a query', 'a?b'],
    ['a fragment', 'a#b'],
    ['an accented letter', 'café'],
    ['a decomposed accent', 'cafe\u0301'],
    ['a Cyrillic letter that looks Latin', '\u0430pp'],
    ['a full-width letter', '\uff41'],
    ['an emoji', 'bot-😀'],
    ['a zero-width space', 'a\u200b'],
    ['a NUL', 'a\u0000'],
    ['a trailing newline', 'a\n'],
    ['a leading newline', '\na'],
    ['a lone surrogate', 'a\ud800'],
  ])('refuses %s', (_name, id) => {
    expect(isId(id)).toBe(false)
  })

  it('accepts exactly what the contract describes, over any text', () => {
    const alphabet = fc.constantFrom(...'aZ09._~-/ %é\n\u0000'.split(''), '😀', '\ud800')
    const text = fc.oneof(
      fc.string({ unit: alphabet, maxLength: 12 }),
      fc.string({ unit: anyCodePoint, maxLength: 10 }),
      fc.string({ minLength: 126, maxLength: 131 }),
    )
    fc.assert(
      fc.property(text, (candidate) => {
        expect(isId(candidate)).toBe(contractSays(candidate))
      }),
    )
  })

  it('only accepts text that needs no escaping in a URL path segment and is never . or ..', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'ab.~-_/%'.split('')), maxLength: 4 }),
        (candidate) => {
          if (!isId(candidate)) return
          expect(encodeURIComponent(candidate)).toBe(candidate)
          expect(['.', '..']).not.toContain(candidate)
          expect(new URL(`http://h/v1/applications/${candidate}`).pathname).toBe(
            `/v1/applications/${candidate}`,
          )
        },
      ),
    )
  })
})

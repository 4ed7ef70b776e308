import fc from 'fast-check'
import RE2 from 're2'
import { describe, expect, it } from 'vitest'
import { regexMatcher } from '../../../src/rules/detectors/index.js'
import { requiredLiterals } from '../../../src/rules/detectors/regex-literals.js'
import { msg } from './detector-helpers.js'

const sorted = (l: string[] | null) => (l === null ? null : [...l].sort())

describe('requiredLiterals', () => {
  it('reads the literals every match holds', () => {
    expect(sorted(requiredLiterals('\\b(?:secret|token|password)\\s*[:=]\\s*\\S+'))).toEqual([
      'password',
      'secret',
      'token',
    ])
    expect(requiredLiterals('\\border\\s+#?\\d{6,}\\b')).toEqual(['order'])
    expect(requiredLiterals('api[_-]?key')).toEqual(['api'])
    expect(sorted(requiredLiterals('(?:a|b)(?:c|d)x'))).toEqual(['acx', 'adx', 'bcx', 'bdx'])
    expect(requiredLiterals('(ab)+c')).toEqual(['ab'])
    expect(requiredLiterals('(?P<n>hello) \\.world')).toEqual(['hello .world'])
    expect(requiredLiterals('x\\by')).toEqual(['xy'])
  })
  it('reads none where a match may hold no literal, or where the reading gives up', () => {
    for (const pattern of [
      '\\d{3}[-.]\\d{4}',
      '(?i)secret',
      'a(?i:b)c',
      'x*',
      '(ab)?',
      'secret|\\d+',
      '^',
      '.',
      '\\Qa.b\\E',
      '\\x{41}',
      '😀',
      'a{,3}',
      '',
    ]) {
      expect(requiredLiterals(pattern), pattern).toBeNull()
    }
    // Only the part that is plain counts.
    expect(requiredLiterals('(?i)x|abc')).toBeNull()
    expect(requiredLiterals('ab*c')).toEqual(['a'])
  })

  // The prefilter must never skip a text RE2 finds a match in: findings with it are those of
  // RE2 on every text.
  const atoms = fc.constantFrom(
    'a',
    'b',
    'ab',
    'secret',
    '\\.',
    '.',
    '\\d',
    '\\s',
    '\\b',
    '[a-c]',
    '[^a]',
    '^',
    '$',
    ' ',
    'é',
    '-',
    '\\n',
    '\\pL',
  )
  const quantifiers = fc.constantFrom('', '', '', '*', '+', '?', '{2}', '{1,3}', '{0,2}', '+?')
  const piece: fc.Arbitrary<string> = fc.letrec<{ piece: string }>((tie) => ({
    piece: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.tuple(atoms, quantifiers).map(([a, q]) => a + q),
      fc
        .tuple(fc.array(tie('piece'), { minLength: 1, maxLength: 3 }), fc.constantFrom('(?:', '(', '(?s:'))
        .map(([ps, open]) => `${open}${ps.join('|')})`),
      fc
        .tuple(fc.array(tie('piece'), { minLength: 1, maxLength: 4 }), quantifiers)
        .map(([ps, q]) => `(?:${ps.join('')})${q}`),
    ),
  })).piece
  const pattern = fc.array(piece, { minLength: 1, maxLength: 5 }).map((ps) => ps.join(''))
  const text = fc
    .array(
      fc.constantFrom('a', 'b', 'c', 'ab', 'secret', '.', ' ', '\n', '1', '22', 'é', '😀', '\ud800', '-'),
      {
        maxLength: 20,
      },
    )
    .map((ps) => ps.join(''))
  it('never skips a text RE2 matches, on random patterns and texts', () => {
    fc.assert(
      fc.property(pattern, fc.array(text, { minLength: 1, maxLength: 4 }), (p, texts) => {
        const literals = requiredLiterals(p)
        const re = new RE2(p, 'u')
        const fast = regexMatcher(p)
        const full = regexMatcher(p, false)
        for (const t of texts) {
          if (literals !== null && !literals.some((l) => t.includes(l)))
            expect(re.test(t), `${p} on ${t}`).toBe(false)
          expect(fast(msg(t))).toEqual(full(msg(t)))
        }
      }),
      { numRuns: 600 },
    )
  })
})

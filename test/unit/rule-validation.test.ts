import { describe, expect, it } from 'vitest'
import { checkRules, normalizeRule } from '../../src/rules/validation.js'

/** The workspace whose patterns are checked. */
const W = { workspace: 'w' }

const regex = (value: string) => normalizeRule({ type: 'regex', value })

describe('regex rule checks', () => {
  it('gives the same verdict each time a pattern is checked again', () => {
    for (let round = 0; round < 3; round++) {
      expect(checkRules([regex('\\bsecret\\s*=\\s*\\S+')], null, '', W)).toEqual([])
      const errors = checkRules([regex('(unclosed'), regex('(a)\\1'), regex('ok')], null, '', W)
      expect(errors.map((e) => e.pointer)).toEqual(['/rules/0/value', '/rules/1/value'])
      expect(errors[0]?.detail).toMatch(/^is not a valid RE2 pattern: missing \)/)
      expect(errors[1]?.detail).toMatch(/^is not a valid RE2 pattern: .*\\1/)
    }
  })

  it('checks patterns that differ only slightly on their own', () => {
    expect(checkRules([regex('a{1,1000}')], null, '', W)).toEqual([])
    expect(checkRules([regex('((a{1,1000}){1,1000}){1,1000}')], null, '', W)).toHaveLength(1)
    expect(checkRules([regex('a{1,1000}')], null, '', W)).toEqual([])
  })

  it('refuses what only a backtracking engine can run, and accepts what RE2 can', () => {
    const refused = ['a(?=b)', 'a(?!b)', '(?<=a)b', '(?<!a)b', 'a*+']
    const errors = checkRules(refused.map(regex), null, '', W)
    expect(errors.map((e) => e.pointer)).toEqual(refused.map((_, i) => `/rules/${i}/value`))
    for (const error of errors) expect(error.detail).toMatch(/^is not a valid RE2 pattern: /)
    const accepted = [
      '(?i)secret',
      '\\p{L}+',
      '(?P<key>sk-[A-Za-z0-9]{20,})',
      '^\\d{3}-\\d{2}$',
      '[^\\x00-\\x7f]',
    ]
    expect(checkRules(accepted.map(regex), null, '', W)).toEqual([])
  })

  it('requires a pattern for a regex rule', () => {
    expect(checkRules([normalizeRule({ type: 'regex' })], null, '', W)).toEqual([
      { pointer: '/rules/0/value', detail: 'is required for a regex rule: the pattern to match' },
    ])
  })
})

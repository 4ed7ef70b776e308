import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CEILING_MS, regexCompileMs } from '../../../src/rules/detectors/regex-cost.js'

describe('the estimated cost of compiling a pattern in RE2', () => {
  it('charges a Unicode property class by each time it is repeated, and plain text next to nothing', () => {
    const greek = regexCompileMs('\\p{Greek}{1000}c1')
    expect(greek).toBeGreaterThanOrEqual(100)
    expect(regexCompileMs('\\p{L}{40}')).toBeGreaterThan((20 * regexCompileMs('\\p{L}{2}')) / 2)
    expect(regexCompileMs('[\\p{L}\\p{N}]{50}')).toBeGreaterThan(30)
    expect(regexCompileMs('\\b(?:secret|token)\\s*[:=]\\s*\\S+')).toBeLessThan(1)
    expect(regexCompileMs('order [0-9]+')).toBeLessThan(1)
    expect(regexCompileMs('.{1000}')).toBeLessThan(5)
  })

  it('reads groups, alternations, flags and nested counts', () => {
    expect(regexCompileMs('(?:\\pL|\\pN){100}')).toBeCloseTo(2 * regexCompileMs('\\pL{100}'), 0)
    expect(regexCompileMs('(?i)\\p{Lu}{20}')).toBeGreaterThan(regexCompileMs('\\p{Lu}{20}'))
    expect(regexCompileMs('(?:\\p{L}{10}){10}')).toBeCloseTo(regexCompileMs('\\p{L}{100}'), 0)
    expect(regexCompileMs('\\p{L}{5,}')).toBeGreaterThan(regexCompileMs('\\p{L}{4}'))
    expect(regexCompileMs('\\Q\\p{L}{1000}\\E')).toBeLessThan(1)
  })

  it('never goes past what RE2’s memory budget allows, whatever the text', () => {
    expect(regexCompileMs('\\p{L}{1000}\\p{L}{1000}')).toBe(CEILING_MS)
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (pattern) => {
        const ms = regexCompileMs(pattern)
        return Number.isFinite(ms) && ms > 0 && ms <= CEILING_MS
      }),
    )
  })
})

import { describe, expect, it } from 'vitest'
import type { PolicyRule } from '../../src/schemas/policies.js'
import { estimatedMs, type TextSize, textSize } from '../../src/services/evaluation-cost.js'

const rule = (type: PolicyRule['type'], fields: Partial<PolicyRule> = {}): PolicyRule => ({
  type,
  expected: 'pass',
  value: null,
  threshold: null,
  flagged: null,
  ...fields,
})

/** ASCII text of `characters` characters. */
const ascii = (characters: number): TextSize => ({ characters, wide: 0 })

describe('the estimated worst-case cost of an evaluation', () => {
  it('grows with the characters and with each rule by its type', () => {
    const pii = estimatedMs(ascii(1000), [rule('pii')], [], false)
    expect(estimatedMs(ascii(2000), [rule('pii')], [], false)).toBe(2 * pii)
    expect(estimatedMs(ascii(1000), [rule('pii'), rule('keywords')], [], false)).toBeGreaterThan(pii)
    expect(estimatedMs(ascii(1000), [rule('keywords')], [], false)).toBeLessThan(pii / 100)
  })

  it('counts next to nothing for a rule the judge decides', () => {
    const model = estimatedMs(ascii(10_000), [rule('toxicity')], [], false)
    expect(estimatedMs(ascii(10_000), [rule('toxicity')], [], true)).toBeLessThan(model / 100)
    expect(estimatedMs(ascii(10_000), [rule('toxicity', { detector: 'judge' })], [], false)).toBeLessThan(
      model / 100,
    )
    expect(estimatedMs(ascii(10_000), [rule('toxicity', { detector: 'model' })], [], true)).toBe(model)
  })

  it('adds compiling the drafts: their phrases and patterns', () => {
    const drafts = [
      rule('keywords', { flagged: ['a'.repeat(500), 'b'.repeat(500)] }),
      rule('regex', { value: 'c'.repeat(1000) }),
    ]
    expect(estimatedMs(ascii(0), [], drafts, false)).toBe(
      2 * estimatedMs(ascii(0), [], drafts.slice(1), false),
    )
    expect(estimatedMs(ascii(0), [], drafts, false)).toBeGreaterThan(1)
  })

  it('keeps the reference conversation (3,496 characters) on the event loop, and 0.9 MiB off it', () => {
    const reference = [rule('pii'), rule('keywords'), rule('regex'), rule('regex'), rule('length')]
    expect(estimatedMs(ascii(3496), reference, [], false)).toBeLessThan(40)
    expect(estimatedMs(ascii(943_710), reference, [], false)).toBeGreaterThan(40)
  })

  it('prices the text folding multiplies: 330,000 × U+FDFA under 7 keywords rules goes off the event loop', () => {
    const wide = textSize({ messages: [{ role: 'user', content: '\uFDFA'.repeat(330_000) }], context: null })
    expect(wide).toEqual({ characters: 330_000, wide: 660_000 })
    const plain = textSize({ messages: [{ role: 'user', content: 'a'.repeat(330_000) }], context: null })
    const keywords = Array.from({ length: 7 }, () => rule('keywords', { flagged: ['refund'] }))
    // Measured: 1.86 s on the event loop for the first, 0.18 s for plain text of the size.
    expect(estimatedMs(plain, keywords, [], false)).toBeLessThan(40)
    expect(estimatedMs(wide, keywords, [], false)).toBeGreaterThan(1000)
    // A rule that folds nothing is not charged for it.
    expect(estimatedMs(wide, [rule('length', { value: '10' })], [], false)).toBe(
      estimatedMs(plain, [rule('length', { value: '10' })], [], false),
    )
  })
})

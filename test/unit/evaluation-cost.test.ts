import { describe, expect, it } from 'vitest'
import type { PolicyRule } from '../../src/schemas/policies.js'
import { estimatedMs } from '../../src/services/evaluation-cost.js'

const rule = (type: PolicyRule['type'], fields: Partial<PolicyRule> = {}): PolicyRule => ({
  type,
  expected: 'pass',
  value: null,
  threshold: null,
  flagged: null,
  ...fields,
})

describe('the estimated worst-case cost of an evaluation', () => {
  it('grows with the characters and with each rule by its type', () => {
    const pii = estimatedMs(1000, [rule('pii')], [], false)
    expect(estimatedMs(2000, [rule('pii')], [], false)).toBe(2 * pii)
    expect(estimatedMs(1000, [rule('pii'), rule('keywords')], [], false)).toBeGreaterThan(pii)
    expect(estimatedMs(1000, [rule('keywords')], [], false)).toBeLessThan(pii / 100)
  })

  it('counts next to nothing for a rule the judge decides', () => {
    const model = estimatedMs(10_000, [rule('toxicity')], [], false)
    expect(estimatedMs(10_000, [rule('toxicity')], [], true)).toBeLessThan(model / 100)
    expect(estimatedMs(10_000, [rule('toxicity', { detector: 'judge' })], [], false)).toBeLessThan(
      model / 100,
    )
    expect(estimatedMs(10_000, [rule('toxicity', { detector: 'model' })], [], true)).toBe(model)
  })

  it('adds compiling the drafts: their phrases and patterns', () => {
    const drafts = [
      rule('keywords', { flagged: ['a'.repeat(500), 'b'.repeat(500)] }),
      rule('regex', { value: 'c'.repeat(1000) }),
    ]
    expect(estimatedMs(0, [], drafts, false)).toBe(2 * estimatedMs(0, [], drafts.slice(1), false))
    expect(estimatedMs(0, [], drafts, false)).toBeGreaterThan(1)
  })

  it('keeps the reference conversation (3,496 characters) on the event loop, and 0.9 MiB off it', () => {
    const reference = [rule('pii'), rule('keywords'), rule('regex'), rule('regex'), rule('length')]
    expect(estimatedMs(3496, reference, [], false)).toBeLessThan(40)
    expect(estimatedMs(943_710, reference, [], false)).toBeGreaterThan(40)
  })
})

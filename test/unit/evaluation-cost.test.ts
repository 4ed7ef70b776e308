import { describe, expect, it } from 'vitest'
import {
  COMPILE_BUDGET_MS,
  checkMs,
  compileMs,
  estimatedMs,
  type TextSize,
  textSize,
} from '../../src/evaluation/cost.js'
import type { PolicyRule } from '../../src/schemas/policies.js'

const rule = (type: PolicyRule['type'], fields: Partial<PolicyRule> = {}): PolicyRule => ({
  type,
  expected: 'pass',
  value: null,
  threshold: null,
  flagged: null,
  ...fields,
})

/** ASCII text of `characters` characters, `triggers` of them digits or `:` (all of them unless said). */
const ascii = (characters: number, triggers = characters): TextSize => ({
  characters,
  wide: 0,
  triggers: () => triggers,
})
/** A TextSize as plain data, for comparing. */
const measured = (size: TextSize) => ({
  characters: size.characters,
  wide: size.wide,
  triggers: size.triggers(),
})

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

  it('adds checking and compiling the drafts: patterns by what RE2 builds of them, phrases by their length', () => {
    const phrases = rule('keywords', { flagged: ['a'.repeat(500), 'b'.repeat(500)] })
    expect(estimatedMs(ascii(0), [], [phrases], false)).toBeCloseTo(0.8)
    // Folding may expand a character 18-fold: the automaton's build is priced by it.
    const wide = rule('keywords', { flagged: ['\uFDFA'.repeat(1000)] })
    expect(estimatedMs(ascii(0), [], [wide], false)).toBeGreaterThan(10)
    // A plain pattern costs next to nothing; 64 of a repeated property class, seconds (checked
    // and compiled: twice).
    expect(estimatedMs(ascii(0), [], [rule('regex', { value: 'c'.repeat(1000) })], false)).toBeLessThan(1)
    const greek = Array.from({ length: 64 }, (_, i) => rule('regex', { value: `\\p{Greek}{1000}c${i}` }))
    expect(estimatedMs(ascii(0), [], greek, false)).toBeGreaterThan(10_000)
    expect(checkMs(greek)).toBeGreaterThan(COMPILE_BUDGET_MS)
    expect(compileMs(greek)).toBeCloseTo(checkMs(greek))
    expect(compileMs([phrases])).toBeCloseTo(0.8)
    expect(checkMs([phrases])).toBe(0)
  })

  it('keeps the reference conversation (4,096 characters, 34 triggers) on the event loop, and 0.9 MiB off it', () => {
    const reference = [rule('pii'), rule('keywords'), rule('regex'), rule('regex'), rule('length')]
    expect(estimatedMs(ascii(4096, 34), reference, [], false)).toBeLessThan(15)
    expect(estimatedMs(ascii(943_710, 6_500), reference, [], false)).toBeGreaterThan(40)
    // 4 KB of distinct phone numbers (two triggers in three characters) costs pii its worst: off the loop.
    expect(estimatedMs(ascii(4096, 2730), [rule('pii')], [], false)).toBeGreaterThan(40)
  })

  it('prices pii by what its candidates start from: digits, @ and :, full-width and circled digits too', () => {
    const size = (content: string) =>
      measured(textSize({ messages: [{ role: 'user', content }], context: null }))
    expect(size('Call me at 555-0134 or jo@example.com, port :80.')).toMatchObject({ triggers: 13 })
    expect(size('Plain words, nothing to confirm.')).toMatchObject({ triggers: 0 })
    // Candidates without a digit: a MAC address of letters, a codice fiscale all in letters.
    expect(size('MAC AA-BB-CC-DD-EE-FF')).toMatchObject({ triggers: 5 })
    expect(size('CF RSSMRAQRCMNFNLRG, WELL-KNOWN')).toMatchObject({ triggers: 2 })
    // NFKC folds these to digits, @ and :, which the pii rule then reads.
    expect(size('\uFF14\uFF11 \u2460\u00B2 jo\uFF20x \uFF1A')).toMatchObject({ triggers: 8 })
    const plain = estimatedMs(ascii(10_000, 0), [rule('pii')], [], false)
    expect(estimatedMs(ascii(10_000, 100), [rule('pii')], [], false)).toBeGreaterThan(plain + 2)
  })

  it('prices the text folding multiplies: 330,000 × U+FDFA under 7 keywords rules goes off the event loop', () => {
    const wide = textSize({ messages: [{ role: 'user', content: '\uFDFA'.repeat(330_000) }], context: null })
    expect(measured(wide)).toEqual({ characters: 330_000, wide: 660_000, triggers: 0 })
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

  it('counts tool calls’ names and arguments as text read, a custom tool’s input too, and a call without either as nothing', () => {
    const size = textSize({
      messages: [
        {
          role: 'assistant',
          content: 'ok',
          tool_calls: [
            { id: 'a', type: 'function', function: { name: 'f', arguments: '{"n":"\u00e9"}' } },
            { id: 'b', type: 'custom', custom: { name: 'shell', input: 'ls' } },
            { id: 'c', type: 'function' },
          ],
        },
      ],
      context: null,
    })
    // Content, then each call's arguments and name: f, shell.
    expect(measured(size)).toEqual({ characters: 2 + 9 + 1 + 2 + 5, wide: 1, triggers: 1 })
    const wide = textSize({
      messages: [{ role: 'assistant', content: '', tool_calls: [{ function: { arguments: '{"n":"é"}' } }] }],
      context: null,
    })
    expect(measured(wide)).toEqual({ characters: 9, wide: 1, triggers: 1 })
  })
})

import { describe, expect, it } from 'vitest'
import { shippedClassifier } from '../../../src/models/shipped.js'
import { injectionScorer } from '../../../src/rules/detectors/classifier/scorers.js'
import {
  keywordsMatcher,
  piiMatcher,
  regexMatcher,
  toxicityHeuristic,
} from '../../../src/rules/detectors/index.js'
import { msg } from './detector-helpers.js'

/**
 * 100 KB of near-misses for each built-in pattern: inputs on which a backtracking regex with an
 * unbounded or ambiguous repetition would take quadratic or exponential time. The tests assert
 * what each must produce (nothing, for a near-miss); timings live in bench/detectors.mjs, not here.
 */
const N = 100_000
const repeat = (unit: string) => unit.repeat(Math.ceil(N / unit.length)).slice(0, N)

describe('built-in patterns stay linear on adversarial input', () => {
  const pii = piiMatcher(null)
  // Near-misses of every kind: none is personal data, so none may be found.
  const nothing: [string, string][] = [
    ['digit runs', repeat('1 ')],
    ['dashed digits', repeat('1-')],
    ['long digit run', repeat('4')],
    ['almost emails', repeat('a@')],
    ['dotted local parts', repeat('a.')],
    ['domains without a dot', `x@${repeat('a')}`],
    ['colons', repeat(':')],
    ['hex and colons', repeat('a:')],
    ['dotted numbers', repeat('1.')],
    ['plus signs and digits', repeat('+1 ')],
    ['key block headers', repeat('-----BEGIN ')],
    ['schemes without credentials', repeat('a://b:c')],
    ['key prefixes', repeat('sk-')],
    ['IBAN-like', repeat('DE89 ')],
    ['IBAN-like, lower case with dashes', repeat('de89-')],
    ['IBAN-like words', repeat('ab12 cdef ')],
    ['SSN cues', repeat('ssn ')],
    ['phone cues', repeat('Telefon: ')],
    ['phone cues before digit groups', repeat('Tel: 0 ')],
    ['a phone cue before a long run of groups', `Tel: ${repeat('12 ')}`],
    ['parenthesised digits', repeat('(1) ')],
    ['digits joined by slashes', repeat('1/')],
  ]
  for (const [name, text] of nothing) {
    it(`pii: ${name}: nothing found`, () => {
      expect(pii(msg(text))).toEqual([])
    })
  }
  it('pii: a key block header with no end: the whole unterminated block is one secret', () => {
    const text = `-----BEGIN PRIVATE KEY-----${repeat('\nAAAA')}`
    expect(pii(msg(text))).toEqual([
      { kind: 'api_key', source: 'messages', index: 0, start: 0, end: text.length, text },
    ])
  })
  it('pii: repeated key blocks with no end: each block is one secret, at its own offset', () => {
    const unit = '-----BEGIN PRIVATE KEY-----\nAAAA\n'
    const findings = pii(msg(repeat(unit)))
    // Every whole block; the cut one at the end has no header left.
    expect(findings).toHaveLength(Math.floor(N / unit.length))
    findings.forEach((f, i) => {
      expect(f).toEqual({
        kind: 'api_key',
        source: 'messages',
        index: 0,
        start: i * unit.length,
        end: i * unit.length + unit.length - 1,
        text: unit.slice(0, -1),
      })
    })
  })
  it('pii: finds what is real inside adversarial filler', () => {
    const text = `${repeat('1 ')} card 4111111111111111 ${repeat('a@')}`
    expect(piiMatcher(['credit_card'])(msg(text)).map((f) => f.text)).toContain('4111111111111111')
  })
  it('keywords: many phrases sharing long prefixes', () => {
    const phrases = Array.from({ length: 1000 }, (_, i) => `${'ab'.repeat(100)}${i}`)
    expect(keywordsMatcher(phrases)(msg(repeat('ab')))).toEqual([])
  })
  it('regex: a pattern that backtracks catastrophically elsewhere', () => {
    expect(regexMatcher('(x+x+)+y')(msg(repeat('x')))).toEqual([])
  })
  it('toxicity: repeated letters and near-words', () => {
    expect(toxicityHeuristic(null)(msg(repeat('fu')))).toEqual({ score: 0, reason: null, findings: [] })
    expect(toxicityHeuristic(null)(msg(repeat('kill '))).score).toBe(0)
  })
  it('prompt injection: repeated openers are flagged with findings inside the text, noise passes', () => {
    const injection = injectionScorer(shippedClassifier('prompt_injection'))
    for (const unit of ['ignore all the ', 'pretend ']) {
      const scored = injection(msg(repeat(unit)), 0.5)
      expect(scored.score, unit).toBeGreaterThan(0.5)
      expect(scored.findings.length).toBeGreaterThan(0)
      for (const f of scored.findings) {
        expect(f.end).toBeLessThanOrEqual(N)
        expect(f.text?.trim().split(' ')[0]).toBe(unit.split(' ')[0])
      }
    }
    for (const unit of ['A1b', 'a b ', '⠁']) {
      const scored = injection(msg(repeat(unit)), 0.5)
      expect(scored.score, unit).toBeLessThanOrEqual(0.5)
      expect(scored.findings).toEqual([])
    }
    // A hex run that decodes to letters without words ("ABAB…") is read as hidden text and
    // scores like one; only its range is held here.
    const hex = injection(msg(repeat('4142')), 0.5)
    expect(hex.score).toBeGreaterThanOrEqual(0)
    expect(hex.score).toBeLessThanOrEqual(1)
  })
})

import { describe, expect, it } from 'vitest'
import { TOXICITY_CATEGORIES, toxicityHeuristic } from '../../../src/rules/detectors/index.js'
import { msg } from './detector-helpers.js'

describe('toxicityHeuristic', () => {
  const all = toxicityHeuristic(null)
  it('scores clean text 0 with no reason', () => {
    expect(all(msg('Could you summarise this quarterly report for me?'))).toEqual({
      score: 0,
      reason: null,
      findings: [],
    })
    // Words that merely contain a listed word.
    expect(all(msg('Scunthorpe, Sussex, a cocktail and an assassin')).score).toBe(0)
  })
  it('finds profanity through leetspeak, full-width letters and repeated letters', () => {
    for (const text of ['you are a b1tch', 'ｆｕｃｋ this', 'fuuuuck this']) {
      const result = all(msg(text))
      expect(result.score).toBeGreaterThan(0.5)
      expect(result.reason).toContain('profanity')
      expect(result.findings[0]?.kind).toBe('toxicity')
    }
  })
  it('scores each category from its lexicon, and combines hits', () => {
    expect(all(msg('I will kill you')).score).toBe(0.9)
    expect(all(msg('I want to end my life')).reason).toBe('lexicon hits: self_harm (1)')
    const mild = all(msg('you idiot'))
    expect(mild.score).toBe(0.45)
    const two = all(msg('you stupid idiot'))
    expect(two.score).toBeCloseTo(1 - 0.55 * 0.55, 3)
    expect(two.findings.map((f) => f.text)).toEqual(['stupid', 'idiot'])
  })
  it('judges only the flagged categories', () => {
    const violenceOnly = toxicityHeuristic(['violence'])
    expect(violenceOnly(msg('shit, you idiot')).score).toBe(0)
    expect(violenceOnly(msg('I will kill you, idiot')).reason).toBe('lexicon hits: violence (1)')
    expect(toxicityHeuristic(['profanity'])(msg('I will kill you')).score).toBe(0)
    expect(TOXICITY_CATEGORIES).toEqual([
      'hate',
      'harassment',
      'sexual',
      'violence',
      'self_harm',
      'profanity',
    ])
  })
  it('reports spans in code points', () => {
    const text = '😀😀 kill yourself'
    const [f] = all(msg(text, 2)).findings
    expect(f).toEqual({
      kind: 'toxicity',
      source: 'messages',
      index: 2,
      start: 3,
      end: 16,
      text: 'kill yourself',
    })
    const [g] = all(msg('😀 shit')).findings
    expect(g).toMatchObject({ start: 2, end: 6, text: 'shit' })
  })
})

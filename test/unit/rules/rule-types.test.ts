import { describe, expect, it } from 'vitest'
import { RULE_TYPE_MODULES } from '../../../src/rules/rule-types/registry.js'
import { RULE_TYPES } from '../../../src/schemas/policies.js'

describe('the rule type registry', () => {
  it('has one module per rule type, under its own name', () => {
    expect(Object.keys(RULE_TYPE_MODULES).sort()).toEqual([...RULE_TYPES].sort())
    for (const [type, module] of Object.entries(RULE_TYPE_MODULES)) expect(module.type).toBe(type)
  })

  it('says which types are scored, and which way their threshold reads', () => {
    const scored = Object.values(RULE_TYPE_MODULES)
      .filter((m) => m.scoring !== null)
      .map((m) => [m.type, m.scoring])
    expect(Object.fromEntries(scored)).toEqual({
      toxicity: 'lower-is-better',
      prompt_injection: 'lower-is-better',
      factuality: 'higher-is-better',
      relevance: 'higher-is-better',
      custom: 'higher-is-better',
    })
  })

  it('says which types may name their detector and which findings redaction replaces', () => {
    const types = (pick: (m: (typeof RULE_TYPE_MODULES)['pii']) => boolean) =>
      Object.values(RULE_TYPE_MODULES)
        .filter(pick)
        .map((m) => m.type)
    expect(types((m) => m.detectorChoice)).toEqual(['toxicity', 'prompt_injection'])
    expect(types((m) => m.redacts)).toEqual(['pii', 'keywords', 'regex'])
    expect(types((m) => m.warmUp !== null)).toEqual([
      'pii',
      'keywords',
      'regex',
      'length',
      'toxicity',
      'prompt_injection',
    ])
  })
})

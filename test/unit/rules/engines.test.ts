import { describe, expect, it } from 'vitest'
import { ENGINES } from '../../../src/rules/engines/registry.js'
import { RULE_TYPES } from '../../../src/schemas/policies.js'

describe('the rule engine registry', () => {
  it('has one engine per rule type, under its own name', () => {
    expect(Object.keys(ENGINES).sort()).toEqual([...RULE_TYPES].sort())
    for (const [type, engine] of Object.entries(ENGINES)) expect(engine.type).toBe(type)
  })

  it('says which types are scored and which want a minimum score', () => {
    const scored = Object.values(ENGINES)
      .filter((e) => e.scored)
      .map((e) => [e.type, e.minimum])
    expect(Object.fromEntries(scored)).toEqual({
      toxicity: false,
      prompt_injection: false,
      factuality: true,
      relevance: true,
      custom: true,
    })
  })
})

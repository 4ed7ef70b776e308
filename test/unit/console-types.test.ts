import { describe, expect, it } from 'vitest'
import * as consoleTypes from '../../console/src/types.js'
import { TOXICITY_CATEGORIES } from '../../src/rules/detectors/toxicity.js'
import { PII_KINDS, RULE_TYPES, TARGETS } from '../../src/schemas/policies.js'

// The console is built apart from the server and keeps its own copy of the API's lists, for its
// forms; they must be the API's (rule types in the console's own order: detectors first).
describe("the console's copy of the API's lists", () => {
  it('is the API’s: rule types, targets, pii kinds and toxicity categories', () => {
    expect([...consoleTypes.RULE_TYPES].sort()).toEqual([...RULE_TYPES].sort())
    expect(consoleTypes.TARGETS).toEqual(TARGETS)
    expect(consoleTypes.PII_KINDS).toEqual(PII_KINDS)
    expect(consoleTypes.TOXICITY_CATEGORIES).toEqual(TOXICITY_CATEGORIES)
  })
})

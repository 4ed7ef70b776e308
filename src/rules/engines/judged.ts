import { broken, type RuleEngine } from './engine.js'

/** factuality: the judge's support of the output by the context. */
export const factualityEngine: RuleEngine = {
  type: 'factuality',
  scored: true,
  minimum: true,
  compile: () => ({ kind: 'factuality' }),
}

/** relevance: the judge's relevance of the output to the input. */
export const relevanceEngine: RuleEngine = {
  type: 'relevance',
  scored: true,
  minimum: true,
  compile: () => ({ kind: 'relevance' }),
}

/** custom: the judge's reading of the texts against the policy's `definition`. */
export const customEngine: RuleEngine = {
  type: 'custom',
  scored: true,
  minimum: true,
  compile(_rule, { definition }) {
    if (definition === null) return broken('the policy has no definition', 'judge')
    return { kind: 'custom', definition }
  },
}

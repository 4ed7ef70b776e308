import { injectionScorer } from '../detectors/classifier/scorers.js'
import type { RuleEngine } from './engine.js'

/** prompt_injection: the offline model or the judge (the rule's `detector`). */
export const promptInjectionEngine: RuleEngine = {
  type: 'prompt_injection',
  scored: true,
  minimum: false,
  compile(rule, { classifiers }) {
    return {
      kind: 'per-text-score',
      type: 'prompt_injection',
      detector: rule.detector ?? null,
      model: injectionScorer(classifiers.prompt_injection),
      categories: [],
    }
  },
}

import { toxicityScorer } from '../detectors/classifier/scorers.js'
import { TOXICITY_CATEGORIES, toxicityHeuristic } from '../detectors/index.js'
import type { RuleEngine } from './engine.js'

/**
 * toxicity: the offline model or the judge (the rule's `detector`); with `flagged`, the
 * categories judged, those the model has no head for scored by the lexicon.
 */
export const toxicityEngine: RuleEngine = {
  type: 'toxicity',
  scored: true,
  minimum: false,
  compile(rule, { classifiers }) {
    const classifier = classifiers.toxicity
    const heads = new Set(classifier.model.heads.map((h) => h.name))
    const unmodelled = rule.flagged?.filter((c) => !heads.has(c)) ?? []
    return {
      kind: 'per-text-score',
      type: 'toxicity',
      detector: rule.detector ?? null,
      model: toxicityScorer(
        classifier,
        rule.flagged,
        unmodelled.length > 0 ? toxicityHeuristic(unmodelled) : null,
      ),
      categories: rule.flagged ?? TOXICITY_CATEGORIES,
    }
  },
}

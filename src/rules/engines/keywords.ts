import { keywordsDetector } from '../detectors/index.js'
import { broken, type RuleEngine } from './engine.js'

/** keywords: the flagged phrases as whole words, after NFKC and case folding. */
export const keywordsEngine: RuleEngine = {
  type: 'keywords',
  scored: false,
  minimum: false,
  compile(rule) {
    if (rule.flagged === null) return broken('the keywords rule has no phrases')
    return { kind: 'detector', ...keywordsDetector(rule.flagged) }
  },
}

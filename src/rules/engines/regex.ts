import { regexMatcher } from '../detectors/index.js'
import { regexPending } from '../detectors/pending.js'
import { broken, type RuleEngine } from './engine.js'

/** regex: an RE2 pattern, linear-time. */
export const regexEngine: RuleEngine = {
  type: 'regex',
  scored: false,
  minimum: false,
  compile(rule) {
    if (rule.value === null) return broken('the regex rule has no pattern')
    try {
      return { kind: 'detector', match: regexMatcher(rule.value), pending: regexPending(rule.value) }
    } catch {
      return broken('the regex rule has a pattern RE2 cannot compile')
    }
  },
}

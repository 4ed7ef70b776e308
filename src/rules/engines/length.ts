import { lengthMatcher } from '../detectors/index.js'
import { lengthPending } from '../detectors/pending.js'
import { broken, type RuleEngine } from './engine.js'

const LENGTH_VALUE = /^[1-9][0-9]{0,7}$/
const MAX_LENGTH = 10_000_000

/** length: at most `value` code points. */
export const lengthEngine: RuleEngine = {
  type: 'length',
  scored: false,
  minimum: false,
  compile(rule) {
    const max = rule.value !== null && LENGTH_VALUE.test(rule.value) ? Number(rule.value) : 0
    if (max < 1 || max > MAX_LENGTH) return broken('the length rule has no valid maximum')
    return { kind: 'detector', match: lengthMatcher(max), pending: lengthPending(max) }
  },
}

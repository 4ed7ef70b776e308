import { lengthMatcher } from '../detectors/index.js'
import { lengthPending } from '../detectors/pending.js'
import { broken, detector, type RuleTypeModule, warmUpRule } from './rule-type.js'

/** A length rule's `value`: a decimal integer from 1 to MAX_LENGTH. */
const LENGTH_VALUE = /^[1-9][0-9]{0,7}$/
const MAX_LENGTH = 10_000_000

/** The rule's maximum, or null when its value is not one. */
function maximum(value: string | null): number | null {
  if (value === null || !LENGTH_VALUE.test(value)) return null
  const max = Number(value)
  return max > MAX_LENGTH ? null : max
}

/** length: at most `value` code points. */
export const lengthRule: RuleTypeModule = {
  type: 'length',
  scoring: null,
  detectorChoice: false,
  guardChoice: false,
  redacts: false,
  masks: false,
  allows: null,
  form: { value: 'Maximum length (characters)', about: 'Passes when the text is at most this long.' },
  validate(rule, { at }) {
    if (rule.value === null)
      return [
        { pointer: `${at}/value`, detail: 'is required for a length rule: the maximum number of characters' },
      ]
    if (maximum(rule.value) === null)
      return [{ pointer: `${at}/value`, detail: `must be a decimal integer from 1 to ${MAX_LENGTH}` }]
    return []
  },
  compile(rule) {
    const max = maximum(rule.value)
    if (max === null) return broken('the length rule has no valid maximum')
    return detector(lengthMatcher(max), lengthPending(max))
  },
  cost: { nsPerCharacter: 1, nsPerWideByte: 0 },
  warmUp: warmUpRule('length', { value: '1000' }),
}

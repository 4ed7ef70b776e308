import type { Finding, TargetText } from '../types.js'
import { codePointLength } from './code-points.js'
import type { TextMatcher } from './types.js'

/**
 * A length rule: one finding over the whole text when it has more than `max` code points. A tool
 * call's length is that of its arguments as sent (its finding counts in them).
 */
export function lengthMatcher(max: number): TextMatcher {
  return (target: TargetText): Finding[] => {
    const text = target.call === undefined ? target.text : (target.call.arguments ?? '')
    // A text of at most `max` UTF-16 units has at most `max` code points: no count needed.
    if (text.length <= max) return []
    const length = codePointLength(text)
    if (length <= max) return []
    const finding: Finding = {
      kind: 'length',
      source: target.source,
      index: target.index,
      start: 0,
      end: length,
      text: null,
    }
    if (target.tool_call !== undefined) {
      finding.tool_call = target.tool_call
      finding.path = ''
    }
    return [finding]
  }
}

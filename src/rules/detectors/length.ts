import type { Finding, TargetText } from '../types.js'
import { codePointLength } from './code-points.js'
import type { TextMatcher } from './types.js'

/** A length rule: one finding over the whole text when it has more than `max` code points. */
export function lengthMatcher(max: number): TextMatcher {
  return (target: TargetText): Finding[] => {
    // A text of at most `max` UTF-16 units has at most `max` code points: no count needed.
    if (target.text.length <= max) return []
    const length = codePointLength(target.text)
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

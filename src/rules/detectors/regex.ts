import RE2 from 're2'
import type { Finding, TargetText } from '../types.js'
import { CodePointIndex } from './code-points.js'
import { requiredLiterals } from './regex-literals.js'
import type { TextMatcher } from './types.js'

/**
 * Compiles a user's pattern with RE2, a linear-time engine: no user pattern can backtrack. The
 * `u` flag makes `.` and classes match code points; inline flags (`(?i)`) are the pattern's own.
 * Throws RE2's message when the pattern does not compile (backreferences, lookaround, a program
 * over RE2's memory budget).
 */
export function compileRegex(pattern: string): RE2 {
  return new RE2(pattern, 'gu')
}

/**
 * A regex rule: one finding per non-overlapping match of a user's pattern, run by the `re2`
 * binding to Google's RE2 (C++). It reports UTF-16 offsets even across lone surrogates (which it
 * reads as U+FFFD), converted to code points here. An empty match is a match (`^` or `x*` match
 * every text, as RE2 says), reported as an empty span; matching steps one code point past it.
 *
 * Cost (bench/detectors.mjs, node bench/evaluate.mjs): a few µs for a few KB and about 2 ms for
 * 1 MB without matches, against 40–250 µs and 13–100 ms for re2js, the pure JavaScript port this
 * replaced; each match costs about 2 µs of crossing into C++. A text that holds none of the
 * literals every match needs (regex-literals.ts) is not handed to RE2 at all (`prefilter`, on
 * but for the tests).
 */
export function regexMatcher(pattern: string, prefilter = true): TextMatcher {
  const compiled = compileRegex(pattern)
  const literals = prefilter ? requiredLiterals(pattern) : null
  return (target: TargetText): Finding[] => {
    const text = target.text
    // A text without any literal every match needs has no match: RE2 is not asked.
    if (literals !== null && !literals.some((literal) => text.includes(literal))) return []
    const findings: Finding[] = []
    let index: CodePointIndex | undefined
    compiled.lastIndex = 0
    for (let m = compiled.exec(text); m !== null; m = compiled.exec(text)) {
      const start = m.index
      const end = start + m[0].length
      index ??= new CodePointIndex(text)
      findings.push(index.finding('regex', target, start, end))
      if (end === start) {
        if (start >= text.length) break
        const c = text.charCodeAt(start)
        compiled.lastIndex =
          start + (c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(start + 1) & 0xfc00) === 0xdc00 ? 2 : 1)
      }
    }
    return findings
  }
}

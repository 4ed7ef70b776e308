import { RE2JS } from 're2js'
import type { Finding, TargetText } from '../types.js'
import { CodePointIndex } from './code-points.js'
import type { TextMatcher } from './types.js'

/**
 * A regex rule: one finding per non-overlapping match of a user's pattern, run by re2js, a
 * linear-time RE2 engine in pure JavaScript (no user pattern can backtrack). re2js reports UTF-16
 * offsets, converted to code points here. An empty match is a match (`^` or `x*` match every
 * text, as RE2 says), reported as an empty span; the engine steps past it, so matching ends.
 *
 * Cost (bench/detectors.mjs): about 0.1 ms for 1 KB and 14–32 ms for 100 KB when re2js cannot
 * skip ahead on a literal the pattern requires; with one it skips (0.004 ms for 100 KB). The
 * native `re2` binding (1.23.3, the last without an engines floor of Node 22) ran `\d{3}-\d{4}`
 * over 100 KB in 0.2 ms against re2js's 13.8 ms, but it has no prebuilt binary to download here
 * and its source build of RE2 and Abseil took 2 min 28 s on this 2-core machine, on every fresh
 * `npm ci`; texts are mostly a few KB, where re2js costs a tenth of a millisecond, so it stays.
 */
export function regexMatcher(pattern: string): TextMatcher {
  const compiled = RE2JS.compile(pattern)
  return (target: TargetText): Finding[] => {
    const matcher = compiled.matcher(target.text)
    const findings: Finding[] = []
    let index: CodePointIndex | undefined
    while (matcher.find()) {
      index ??= new CodePointIndex(target.text)
      findings.push(index.finding('regex', target, matcher.start(), matcher.end()))
    }
    return findings
  }
}

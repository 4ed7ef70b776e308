import { LRUCache } from 'lru-cache'
import { regexMatcher } from '../detectors/index.js'
import { regexPending } from '../detectors/pending.js'
import { compileRegex } from '../detectors/regex.js'
import { regexCompileMs } from '../detectors/regex-cost.js'
import { broken, detector, type RuleTypeModule, warmUpRule } from './rule-type.js'

/**
 * What checking a pattern found: '' when RE2 accepts it, otherwise the reason it does not.
 * Compiling a pattern costs from microseconds to hundreds of milliseconds (regex-cost.ts) and
 * policies reuse the same few patterns, so verdicts are kept by workspace and pattern text (at
 * most 1,000 patterns and 4 MB of text). By workspace: a verdict answered at once would tell a
 * tenant which costly patterns another had checked.
 */
const patternVerdicts = new LRUCache<string, string>({
  max: 1000,
  maxSize: 4_000_000,
  sizeCalculation: (_verdict, key) => key.length + 1,
})

/** Why RE2 rejects `pattern`, or '' when it compiles; remembered for the workspace. */
function patternProblem(pattern: string, workspace: string): string {
  const key = `${workspace}\0${pattern}`
  let verdict = patternVerdicts.get(key)
  if (verdict === undefined) {
    try {
      compileRegex(pattern)
      verdict = ''
    } catch (error) {
      verdict = (error instanceof Error ? error.message : '') || 'invalid pattern'
    }
    patternVerdicts.set(key, verdict)
  }
  return verdict
}

/**
 * regex: an RE2 pattern, linear-time, so no stored pattern can ever backtrack catastrophically.
 * Its pattern is compiled on write, unless the body was refused anyway (`patterns: 'skip'`).
 */
export const regexRule: RuleTypeModule = {
  type: 'regex',
  scoring: null,
  detectorChoice: false,
  guardChoice: false,
  redacts: true,
  masks: true,
  allows: 'findings',
  form: { value: 'Pattern (RE2)', about: 'Passes when the pattern matches nowhere.' },
  validate(rule, { at, patterns }) {
    if (rule.value === null)
      return [{ pointer: `${at}/value`, detail: 'is required for a regex rule: the pattern to match' }]
    if (patterns === 'skip') return []
    const problem = patternProblem(rule.value, patterns.workspace)
    return problem === ''
      ? []
      : [{ pointer: `${at}/value`, detail: `is not a valid RE2 pattern: ${problem}` }]
  },
  compile(rule) {
    if (rule.value === null) return broken('the regex rule has no pattern')
    try {
      return detector(regexMatcher(rule.value), regexPending(rule.value))
    } catch {
      return broken('the regex rule has a pattern RE2 cannot compile')
    }
  },
  cost: {
    // A pattern that matches at every character, each match a finding: 1.3 µs a character (typical 7 ns).
    nsPerCharacter: 1_300,
    nsPerWideByte: 0,
    checkMs: (rule) => (rule.value ? regexCompileMs(rule.value) : 0),
    compileMs: (rule) => (rule.value ? regexCompileMs(rule.value) : 0),
  },
  warmUp: warmUpRule('regex', { value: 'order [0-9]+' }),
}

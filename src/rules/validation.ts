import { LRUCache } from 'lru-cache'
import type { FieldError } from '../errors.js'
import { PII_KINDS, type PolicyRule, type PolicyRuleInput } from '../schemas/policies.js'
import { compileRegex } from './detectors/regex.js'

const LENGTH_PATTERN = /^[1-9][0-9]{0,7}$/
const MAX_LENGTH = 10_000_000
const piiKinds: ReadonlySet<string> = new Set(PII_KINDS)

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
 * How `checkRules` reads patterns: by compiling them for a workspace (whose verdicts are kept
 * apart), or not at all (`'skip'`: a body the schema refused).
 */
export type PatternCheck = { workspace: string } | 'skip'

/** Fills in what a rule leaves unset: every field present, `expected` defaulting to pass. */
export function normalizeRule(rule: PolicyRuleInput): PolicyRule {
  const normal: PolicyRule = {
    type: rule.type,
    expected: rule.expected ?? 'pass',
    value: rule.value ?? null,
    threshold: rule.threshold ?? null,
    flagged: rule.flagged ?? null,
  }
  // `detector` is returned only when set.
  if (rule.detector !== undefined && rule.detector !== null) normal.detector = rule.detector
  return normal
}

/**
 * Checks what the schema cannot: the requirements of each rule type. Regex patterns are compiled
 * by RE2, a linear-time engine, so no stored pattern can ever backtrack catastrophically; with
 * `patterns` `'skip'`, they are not compiled (a body the schema refused is answered without
 * compiling anything).
 */
export function checkRules(
  rules: readonly PolicyRule[],
  definition: string | null,
  base: string,
  patterns: PatternCheck,
): FieldError[] {
  const errors: FieldError[] = []
  rules.forEach((rule, i) => {
    const at = `${base}/rules/${i}`
    if (rule.detector !== undefined && rule.type !== 'toxicity' && rule.type !== 'prompt_injection')
      errors.push({
        pointer: `${at}/detector`,
        detail: `applies only to toxicity and prompt_injection rules, not to a ${rule.type} rule`,
      })
    switch (rule.type) {
      case 'keywords':
        if (rule.flagged === null)
          errors.push({
            pointer: `${at}/flagged`,
            detail: 'is required for a keywords rule: the phrases to flag',
          })
        break
      case 'pii':
        rule.flagged?.forEach((kind, j) => {
          if (!piiKinds.has(kind)) {
            errors.push({ pointer: `${at}/flagged/${j}`, detail: `must be one of: ${PII_KINDS.join(', ')}` })
          }
        })
        break
      case 'regex':
        if (rule.value === null) {
          errors.push({
            pointer: `${at}/value`,
            detail: 'is required for a regex rule: the pattern to match',
          })
        } else if (patterns !== 'skip') {
          const problem = patternProblem(rule.value, patterns.workspace)
          if (problem !== '') {
            errors.push({ pointer: `${at}/value`, detail: `is not a valid RE2 pattern: ${problem}` })
          }
        }
        break
      case 'length':
        if (rule.value === null) {
          errors.push({
            pointer: `${at}/value`,
            detail: 'is required for a length rule: the maximum number of characters',
          })
        } else if (!LENGTH_PATTERN.test(rule.value) || Number(rule.value) > MAX_LENGTH) {
          errors.push({ pointer: `${at}/value`, detail: 'must be a decimal integer from 1 to 10000000' })
        }
        break
      case 'custom':
        if (definition === null) {
          errors.push({ pointer: `${base}/definition`, detail: `is required by the custom rule at ${at}` })
        }
        break
      default:
        break
    }
  })
  return errors
}

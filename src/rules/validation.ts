import type { FieldError } from '../errors.js'
import type { PolicyRule, PolicyRuleInput } from '../schemas/policies.js'
import { RULE_TYPE_MODULES } from './rule-types/registry.js'
import type { PatternCheck } from './rule-types/rule-type.js'

export type { PatternCheck } from './rule-types/rule-type.js'

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

/** The types whose rules may name a detector, as a detail names them: "toxicity and prompt_injection". */
const DETECTOR_TYPES = Object.values(RULE_TYPE_MODULES)
  .filter((m) => m.detectorChoice)
  .map((m) => m.type)
  .join(' and ')

/**
 * Checks what the schema cannot: the requirements of each rule type, as its module states them
 * (rule-types/). Regex patterns are compiled by RE2, a linear-time engine; with `patterns`
 * `'skip'`, they are not compiled (a body the schema refused is answered without compiling
 * anything).
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
    const type = RULE_TYPE_MODULES[rule.type]
    if (rule.detector !== undefined && !type.detectorChoice)
      errors.push({
        pointer: `${at}/detector`,
        detail: `applies only to ${DETECTOR_TYPES} rules, not to a ${rule.type} rule`,
      })
    for (const error of type.validate(rule, { at, base, definition, patterns })) errors.push(error)
  })
  return errors
}

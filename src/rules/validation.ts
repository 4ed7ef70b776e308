import type { FieldError } from '../errors.js'
import type { PolicyRule, PolicyRuleInput } from '../schemas/policies.js'
import { RULE_TYPE_MODULES } from './rule-types/registry.js'
import type { PatternCheck } from './rule-types/rule-type.js'
import { guardName } from './rule-types/scored-text.js'

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
  // `detector` and `cascade` are returned only when set.
  if (rule.detector !== undefined && rule.detector !== null) normal.detector = rule.detector
  if (rule.cascade !== undefined && rule.cascade !== null) normal.cascade = rule.cascade
  return normal
}

/** The types whose rules may name a detector, as a detail names them: "toxicity and prompt_injection". */
const DETECTOR_TYPES = Object.values(RULE_TYPE_MODULES)
  .filter((m) => m.detectorChoice)
  .map((m) => m.type)
  .join(' and ')

/** The types whose rules may name a guard detector: "toxicity, prompt_injection and custom". */
const GUARD_TYPES = (() => {
  const types = Object.values(RULE_TYPE_MODULES)
    .filter((m) => m.guardChoice)
    .map((m) => m.type)
  return types.length > 1 ? `${types.slice(0, -1).join(', ')} and ${types[types.length - 1]}` : types.join('')
})()

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
    const guard = guardName(rule.detector)
    if (rule.detector !== undefined && guard === null && !type.detectorChoice)
      errors.push({
        pointer: `${at}/detector`,
        detail: `applies only to ${DETECTOR_TYPES} rules, not to a ${rule.type} rule`,
      })
    if (guard !== null && !type.guardChoice)
      errors.push({
        pointer: `${at}/detector`,
        detail: `names guard detector "${guard}": a guard can score only ${GUARD_TYPES} rules, not a ${rule.type} rule`,
      })
    if (rule.cascade !== undefined) {
      // A cascade puts the offline model in front of a guard: it needs both.
      if (guard === null || !type.detectorChoice)
        errors.push({
          pointer: `${at}/cascade`,
          detail: `applies only to ${DETECTOR_TYPES} rules whose detector names a guard detector`,
        })
      else if (!(rule.cascade.low < rule.cascade.high))
        errors.push({ pointer: `${at}/cascade/high`, detail: 'must be greater than low' })
    }
    for (const error of type.validate(rule, { at, base, definition, patterns })) errors.push(error)
  })
  return errors
}

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
  // `detector`, `cascade`, `action`, `restore` and `allowed` are returned only when set.
  if (rule.detector !== undefined && rule.detector !== null) normal.detector = rule.detector
  if (rule.cascade !== undefined && rule.cascade !== null) normal.cascade = rule.cascade
  if (rule.action !== undefined && rule.action !== null) normal.action = rule.action
  if (rule.restore !== undefined && rule.restore !== null) normal.restore = rule.restore
  if (rule.allowed !== undefined && rule.allowed !== null) normal.allowed = rule.allowed
  return normal
}

/** The types whose rules may name a detector, as a detail names them: "toxicity and prompt_injection". */
const DETECTOR_TYPES = Object.values(RULE_TYPE_MODULES)
  .filter((m) => m.detectorChoice)
  .map((m) => m.type)
  .join(' and ')

/** The types whose rules may mask their findings: "pii, keywords and regex". */
const MASK_TYPES = listed(Object.values(RULE_TYPE_MODULES).filter((m) => m.masks))
/** The types whose rules may list `allowed` values. */
const ALLOWED_TYPES = listed(Object.values(RULE_TYPE_MODULES).filter((m) => m.allows !== null))

/** Types as a detail names them: "a, b and c". */
function listed(modules: readonly { type: string }[]): string {
  const types = modules.map((m) => m.type)
  return types.length > 1 ? `${types.slice(0, -1).join(', ')} and ${types[types.length - 1]}` : types.join('')
}

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
    if (rule.action === 'mask') {
      if (!type.masks)
        errors.push({
          pointer: `${at}/action`,
          detail: `mask applies only to ${MASK_TYPES} rules, not to a ${rule.type} rule`,
        })
      else if (rule.expected === 'fail')
        errors.push({
          pointer: `${at}/action`,
          detail:
            'mask needs expected pass: a mask rule replaces what it finds, it cannot require finding it',
        })
    }
    if (rule.restore !== undefined && rule.action !== 'mask')
      errors.push({
        pointer: `${at}/restore`,
        detail: 'applies only to a rule whose action is mask: it says whether its masked values come back',
      })
    if (rule.allowed !== undefined && type.allows === null)
      errors.push({
        pointer: `${at}/allowed`,
        detail: `applies only to ${ALLOWED_TYPES} rules, not to a ${rule.type} rule`,
      })
    for (const error of type.validate(rule, { at, base, definition, patterns })) errors.push(error)
  })
  return errors
}

/**
 * Whether the guard detectors a policy's rules name may serve them (each rule type's `guardServes`
 * reading what the guard's format judges), for the workspace that
 * writes them: part of validating a policy (a create, an update, a draft), on the main thread,
 * where the configuration is. Pointers as the other rule problems': `{base}/rules/{i}/detector`.
 */
import type { FieldError } from '../errors.js'
import { formatOptions, type GuardDirectory } from '../guards/config.js'
import { FORMATS } from '../guards/formats/index.js'
import { RULE_TYPE_MODULES } from '../rules/rule-types/registry.js'
import type { PolicyRule } from '../schemas/policies.js'

const BUILT_IN = new Set(['model', 'judge'])

/** No guard configured: every guard a rule names is refused. */
export const NO_GUARDS: GuardDirectory = Object.freeze({
  find: () => undefined,
  names: Object.freeze([]),
  all: Object.freeze([]),
})

/** The problems of the guard detectors `rules` name, for a workspace that may use those `granted` says. */
export function guardRuleErrors(
  rules: readonly { type: PolicyRule['type']; detector?: string | null; flagged?: string[] | null }[],
  base: string,
  guards: GuardDirectory,
  granted: (name: string) => boolean,
): FieldError[] {
  const errors: FieldError[] = []
  rules.forEach((rule, i) => {
    const name = rule.detector
    if (name === undefined || name === null || BUILT_IN.has(name)) return
    // Another type naming a guard is refused by the rule checks already.
    const serves = RULE_TYPE_MODULES[rule.type].guardServes
    if (!serves) return
    const pointer = `${base}/rules/${i}/detector`
    const guard = guards.find(name)
    // A guard not granted reads as one not configured: a workspace learns nothing of another's.
    if (!guard || !granted(name)) {
      errors.push({
        pointer,
        detail: `names no guard detector configured for this workspace ("${name}"), so it cannot score this ${rule.type} rule; the detectors are model, judge${listed(guards, granted)}`,
      })
      return
    }
    const why = serves(FORMATS[guard.format].abilities(formatOptions(guard)), {
      flagged: rule.flagged ?? null,
    })
    if (why !== null)
      errors.push({
        pointer,
        detail: `guard detector "${name}" (${guard.format}) cannot score a ${rule.type} rule: ${why}`,
      })
  })
  return errors
}

/** The guards granted, as a detail lists them after the built-in ones. */
function listed(guards: GuardDirectory, granted: (name: string) => boolean): string {
  const names = guards.names.filter(granted)
  return names.length > 0 ? `, ${names.join(', ')}` : ''
}

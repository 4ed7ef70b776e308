import type { FieldError } from '../errors.js'
import { checkRules, normalizeRule } from '../rules/validation.js'
import { MAX_DRAFT_POLICIES } from '../schemas/evaluations.js'
import { MAX_RULES, RULE_TYPES } from '../schemas/policies.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Where this route's body holds policy bodies (`''` for the body itself, `/draft`,
     * `/draft_policies/*`): when the schema refuses the body, the rules it could read are still
     * checked, so one 422 lists every problem instead of the rule errors only after the schema's
     * are fixed; all but their patterns, which are compiled only once the schema has passed.
     * `patch`: the bodies are merge patches, whose missing `definition` is the stored one's.
     */
    policyBodies?: { paths: readonly string[]; patch?: boolean }
  }
}

const ruleTypes: ReadonlySet<string> = new Set(RULE_TYPES)

const isStrings = (x: unknown) => Array.isArray(x) && x.every((s) => typeof s === 'string')

/** A raw rule whose fields `checkRules` reads have the types the schema requires, or null. */
function readableRule(raw: unknown) {
  if (typeof raw !== 'object' || raw === null) return null
  const r = raw as Record<string, unknown>
  if (typeof r.type !== 'string' || !ruleTypes.has(r.type)) return null
  if (r.value !== undefined && r.value !== null && typeof r.value !== 'string') return null
  if (r.flagged !== undefined && r.flagged !== null && !isStrings(r.flagged)) return null
  return normalizeRule(r as never)
}

/** The policy bodies named by `paths` in a request body, each with its pointer. */
function policyBodies(body: unknown, paths: readonly string[]): [string, Record<string, unknown>][] {
  const found: [string, Record<string, unknown>][] = []
  const asObject = (x: unknown) =>
    typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : null
  const root = asObject(body)
  if (root === null) return found
  for (const path of paths) {
    if (path === '') found.push(['', root])
    else if (path.endsWith('/*')) {
      const list = root[path.slice(1, -2)]
      if (Array.isArray(list))
        list.slice(0, MAX_DRAFT_POLICIES).forEach((item, i) => {
          const policy = asObject(item)
          if (policy) found.push([`${path.slice(0, -2)}/${i}`, policy])
        })
    } else {
      const policy = asObject(root[path.slice(1)])
      if (policy) found.push([path, policy])
    }
  }
  return found
}

/**
 * The rule problems of the policy bodies in a body the schema refused: every rule whose fields
 * are readable is checked as a create would check it, but for its pattern: nothing is compiled
 * for a body that is refused anyway (a refused draft of 300 costly patterns once held the event
 * loop for 17 s), and no more rules and bodies are read than the schema allows. A patch without
 * `definition` (one that keeps the stored one) is not held to the custom rule's need for one.
 */
export function ruleErrors(body: unknown, paths: readonly string[], patch = false): FieldError[] {
  const errors: FieldError[] = []
  for (const [base, policy] of policyBodies(body, paths)) {
    if (!Array.isArray(policy.rules)) continue
    const definition = typeof policy.definition === 'string' ? policy.definition : null
    policy.rules.slice(0, MAX_RULES).forEach((raw, i) => {
      const rule = readableRule(raw)
      if (rule === null) return
      for (const error of checkRules([rule], definition, base, 'skip')) {
        if (patch && error.pointer === `${base}/definition` && !('definition' in policy)) continue
        const at = (text: string) => text.replace(`${base}/rules/0`, `${base}/rules/${i}`)
        errors.push({ pointer: at(error.pointer), detail: at(error.detail) })
      }
    })
  }
  return errors
}

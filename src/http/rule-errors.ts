import type { FastifyError, FastifyRequest } from 'fastify'
import type { FieldError } from '../errors.js'
import { checkRules, normalizeRule } from '../rules/validation.js'
import { MAX_DRAFT_POLICIES } from '../schemas/evaluations.js'
import { MAX_RULES, RULE_TYPES } from '../schemas/policies.js'
import { validationProblem } from './problem.js'

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

/** The policy bodies a route's body holds, each with its JSON pointer (`''` for the body itself). */
export type PolicyBodies = (body: Record<string, unknown>) => [string, unknown][]

/** The policy bodies of a body, as `select` finds them, when the body is an object. */
function policyBodies(body: unknown, select: PolicyBodies): [string, Record<string, unknown>][] {
  const asObject = (x: unknown) =>
    typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : null
  const root = asObject(body)
  if (root === null) return []
  const found: [string, Record<string, unknown>][] = []
  for (const [pointer, raw] of select(root)) {
    const policy = asObject(raw)
    if (policy) found.push([pointer, policy])
  }
  return found
}

/** The body itself is a policy body (a create or a merge patch of a policy). */
export const wholeBody: PolicyBodies = (body) => [['', body]]

/** The body's member `name` is a policy body (a test run's `draft`). */
export const memberBody =
  (name: string): PolicyBodies =>
  (body) => [[`/${name}`, body[name]]]

/** The body's member `name` is a list of policy bodies (an evaluation's `draft_policies`), read up to the schema's most. */
export const memberBodies =
  (name: string, max = MAX_DRAFT_POLICIES): PolicyBodies =>
  (body) => {
    const list = body[name]
    return Array.isArray(list) ? list.slice(0, max).map((item, i) => [`/${name}/${i}`, item]) : []
  }

/**
 * A preHandler for a route whose body holds policy bodies, registered with Fastify's
 * `attachValidation`: when the schema refused the request, it answers the schema's problems and,
 * for a refused body, the rule problems of the policy bodies `select` finds (`ruleErrors`), so
 * that one 422 lists every problem instead of the rule errors only after the schema's are fixed.
 * `patch`: the bodies are merge patches, whose missing `definition` is the stored one's.
 */
export function refuseInvalidPolicyBodies(select: PolicyBodies, patch = false) {
  return async (request: FastifyRequest): Promise<void> => {
    const error = request.validationError as FastifyError | undefined
    if (error === undefined) return
    const body = (error.validationContext ?? 'body') === 'body'
    throw validationProblem(error, body ? () => ruleErrors(request.body, select, patch) : undefined)
  }
}

/**
 * The rule problems of the policy bodies in a body the schema refused: every rule whose fields
 * are readable is checked as a create would check it, but for its pattern: nothing is compiled
 * for a body that is refused anyway (a refused draft of 300 costly patterns once held the event
 * loop for 17 s), and no more rules and bodies are read than the schema allows. A patch without
 * `definition` (one that keeps the stored one) is not held to the custom rule's need for one.
 */
export function ruleErrors(body: unknown, select: PolicyBodies, patch = false): FieldError[] {
  const errors: FieldError[] = []
  for (const [base, policy] of policyBodies(body, select)) {
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

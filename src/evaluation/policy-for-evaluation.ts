import type { FieldError } from '../errors.js'
import type { EvaluablePolicy } from '../rules/evaluate.js'
import { checkRules, normalizeRule, type PatternCheck } from '../rules/validation.js'
import type { Policy, PolicyCreate } from '../schemas/policies.js'

/** A stored policy as evaluation takes it: what it says, at its revision (none for a draft). */
export const evaluablePolicy = (policy: Policy, draft = false): EvaluablePolicy => ({
  id: policy.id,
  revision: draft ? null : policy.revision,
  draft,
  rules: policy.rules,
  target: policy.target,
  definition: policy.definition,
  override_response: policy.override_response,
  mode: policy.mode,
  on_error: policy.on_error,
})

/** A draft body as evaluation takes it, never stored, before its rules are checked. */
export function uncheckedDraft(draft: PolicyCreate): EvaluablePolicy {
  return {
    id: draft.id,
    revision: null,
    draft: true,
    rules: draft.rules.map(normalizeRule),
    target: draft.target,
    definition: draft.definition ?? null,
    override_response: draft.override_response ?? null,
    mode: draft.mode ?? 'enforce',
    on_error: draft.on_error ?? 'fail_closed',
  }
}

/**
 * A draft body as evaluation takes it, never stored: validated exactly like a create, each
 * problem's pointer under `base` (`/draft`, `/draft_policies/0`), its patterns compiled as
 * `patterns` says. The caller throws the errors.
 */
export function draftPolicy(
  draft: PolicyCreate,
  base: string,
  patterns: PatternCheck,
): { policy: EvaluablePolicy; errors: FieldError[] } {
  const policy = uncheckedDraft(draft)
  return { policy, errors: checkRules(policy.rules, policy.definition, base, patterns) }
}

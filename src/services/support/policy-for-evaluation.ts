import type { FieldError } from '../../errors.js'
import type { EvaluablePolicy } from '../../rules/evaluate.js'
import { checkRules, normalizeRule } from '../../rules/validation.js'
import type { Policy, PolicyCreate } from '../../schemas/policies.js'

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

/**
 * A draft body as evaluation takes it, never stored: validated exactly like a create, each
 * problem's pointer under `base` (`/draft`, `/draft_policies/0`). The caller throws the errors.
 */
export function draftPolicy(
  draft: PolicyCreate,
  base: string,
): { policy: EvaluablePolicy; errors: FieldError[] } {
  const rules = draft.rules.map(normalizeRule)
  const definition = draft.definition ?? null
  return {
    policy: {
      id: draft.id,
      revision: null,
      draft: true,
      rules,
      target: draft.target,
      definition,
      override_response: draft.override_response ?? null,
      mode: draft.mode ?? 'enforce',
      on_error: draft.on_error ?? 'fail_closed',
    },
    errors: checkRules(rules, definition, base),
  }
}

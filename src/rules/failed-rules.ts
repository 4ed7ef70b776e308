import type { Evaluation } from '../schemas/evaluations.js'

/**
 * Which enforced rule made an evaluation's verdict `fail` (docs/chat-completions.md, "Reasons"):
 * the policy and its revision, the rule's index, type and status, and the kinds of its findings;
 * never the matched text, so that whoever holds only the answer (an application's end user, a
 * gateway) learns why, and nothing of what was found.
 */
export interface FailedRule {
  policy_id: string
  /** The revision evaluated; null for a draft. */
  policy_revision: number | null
  rule_index: number
  rule_type: string
  /** `fail` (or the verdict a rule expected to fail came to), or `error` counted as a failure under fail_closed. */
  status: 'pass' | 'fail' | 'skipped' | 'error'
  /** The kinds of the rule's findings (credit_card, keyword, toxicity, …), each once, in order; empty when it has none. */
  categories: string[]
}

/**
 * The rules of enforced policies that count as failed for the decision: rules not satisfied, and
 * errored rules of fail_closed policies, in policy and rule order. Monitored policies never
 * decide, and are not named.
 */
export function failedRules(evaluation: Pick<Evaluation, 'policies'>): FailedRule[] {
  const failed: FailedRule[] = []
  for (const policy of evaluation.policies) {
    if (policy.mode !== 'enforce') continue
    const closed = policy.on_error === 'fail_closed'
    const counts = policy.verdict === 'fail' || (policy.verdict === 'error' && closed)
    if (!counts) continue
    for (const rule of policy.rules) {
      const failing = !rule.satisfied || (rule.status === 'error' && closed)
      if (!failing) continue
      failed.push({
        policy_id: policy.id,
        policy_revision: policy.revision,
        rule_index: rule.index,
        rule_type: rule.type,
        // A masked rule is satisfied: only fail, error and pass (a rule expected to fail) get here.
        status: rule.status as FailedRule['status'],
        categories: [...new Set(rule.findings.map((f) => f.kind))],
      })
    }
  }
  return failed
}

/** A failed rule in one line: `policy no-pii rule 0 (pii: credit_card)`. */
export function describeFailedRule(rule: FailedRule): string {
  const what =
    rule.status === 'error'
      ? `${rule.rule_type}: error`
      : rule.categories.length > 0
        ? `${rule.rule_type}: ${rule.categories.join(', ')}`
        : rule.rule_type
  return `policy ${rule.policy_id} rule ${rule.rule_index} (${what})`
}

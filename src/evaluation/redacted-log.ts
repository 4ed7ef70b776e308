import type { ConversationInput } from '../rules/conversation.js'
import { type EvaluationOutcome, type RedactedConversation, redactConversation } from '../rules/evaluate.js'
import { maskedLabel } from '../rules/masking.js'
import { RULE_TYPE_MODULES } from '../rules/rule-types/registry.js'
import type { Evaluation } from '../schemas/evaluations.js'

/** What a `redacted` log entry keeps of an evaluation: its policies and texts, every found text replaced. */
export interface RedactedLog {
  policies: Evaluation['policies']
  conversation: RedactedConversation
}

/**
 * A `redacted` log entry's part made in the evaluation pool's worker: its policies, and its texts
 * already written as the log writes them (`logTextsJson`), UTF-8 bytes that move to the main
 * thread without a copy and on to the store as they are (`entryJson`).
 */
export interface PooledRedactedLog {
  policies: Evaluation['policies']
  /** `{"messages":…,"context":…}`, the redacted texts. */
  texts: Uint8Array
}

const label = (kind: string) => `[${kind.toUpperCase()}]`

/** Every occurrence of each text replaced by its label, the longest texts first. */
function scrub(text: string | null, labels: ReadonlyMap<string, string>): string | null {
  if (text === null || labels.size === 0) return text
  let out = text
  for (const [found, replacement] of labels) out = out.split(found).join(replacement)
  return out
}

/**
 * The policies and texts of a `redacted` log entry (EVALUATION_LOG_CONTENT): the texts with every
 * pii, keywords and regex finding replaced by [KIND] (`redacted`, docs/evaluation.md), those findings'
 * `text` by the same label, and any occurrence of a found text (reported or past a rule's cap)
 * in a rule's reason (a judge may quote what it read) too. A card number in `findings[].text`
 * would otherwise defeat the redaction of the messages. Pure: the evaluation pool's worker makes
 * it where the findings are, so that they never cross to the main thread.
 */
export function redactedLog(
  policies: Evaluation['policies'],
  conversation: ConversationInput,
  outcome: EvaluationOutcome,
  /** The answer's own `redacted`, when the caller asked for it: the same text, made once. */
  redacted?: RedactedConversation,
): RedactedLog {
  // Every text found, not only the findings a rule reports (at most MAX_REPORTED_FINDINGS each).
  const labels = new Map<string, string>()
  for (const finding of outcome.redactable) if (finding.text) labels.set(finding.text, label(finding.kind))
  // A masked value reads as its placeholder, as in the conversation sent on; any other as [KIND].
  const masking = outcome.masking
  const masked = maskedLabel(masking)
  if (masking)
    for (const finding of outcome.redactable) if (finding.text) labels.set(finding.text, masked(finding))
  const longestFirst = new Map([...labels].sort(([a], [b]) => b.length - a.length))
  return {
    policies: policies.map((policy) => ({
      ...policy,
      rules: policy.rules.map((rule) => ({
        ...rule,
        reason: scrub(rule.reason, longestFirst),
        ...(rule.guard ? { guard: { ...rule.guard, verdict: scrub(rule.guard.verdict, longestFirst) } } : {}),
        findings: RULE_TYPE_MODULES[rule.type].redacts
          ? rule.findings.map((f) => ({
              ...f,
              text: f.text === null ? null : rule.status === 'masked' ? masked(f) : label(f.kind),
            }))
          : rule.findings,
      })),
    })),
    conversation: masking
      ? redactConversation(conversation, outcome, (f) => labels.get(f.text ?? '') ?? label(f.kind))
      : (redacted ?? redactConversation(conversation, outcome)),
  }
}

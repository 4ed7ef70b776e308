import type { GuardMessage } from '../../guards/verdict.js'
import type { JudgedBlock, JudgeQuestion } from '../../judge/judge.js'
import { encodeData } from '../../judge/prompts.js'
import { absent, broken, type RuleTypeModule, skipped } from './rule-type.js'
import { guardName, guardUnavailable } from './scored-text.js'

/**
 * The judge's question: do `texts`, each named by who wrote it, satisfy the operator's
 * `definition`? Change the version whenever the task's wording changes.
 */
export function customQuestion(definition: string, texts: readonly JudgedBlock[]): JudgeQuestion {
  return {
    type: 'custom',
    version: 'custom-v1',
    // The definition is written by the operator who owns the policy, so it belongs in the system
    // message; it is still JSON-encoded so its line breaks and quotes cannot reshape the prompt.
    task:
      'You check whether a conversation with an AI assistant satisfies a policy written by the operator ' +
      `of that assistant. The policy, as a JSON string: ${encodeData(definition)}\n` +
      'Each block holds one text of the conversation, named by who wrote it (system, user, assistant, ' +
      'or context for a retrieved document). Score 1 when the texts fully satisfy the policy, 0 when ' +
      'they clearly violate it, and in between when they partly do or you are unsure.',
    blocks: texts,
  }
}

/**
 * custom: the judge's reading of the texts the policy's targets select, each labelled with its
 * role, against the policy's `definition` (which a policy with a custom rule must have). A score
 * is how well the texts meet the definition; scored on windows of a streamed reply. A rule
 * naming a policy-following guard detector (`detector`) sends it the definition as the policy;
 * its score is then 1 − the guard's probability that the policy is broken.
 */
export const customRule: RuleTypeModule = {
  type: 'custom',
  scoring: 'higher-is-better',
  detectorChoice: false,
  guardChoice: true,
  // The guard answers how likely the policy is broken; the rule scores how well it is kept.
  guardScore: (verdict) => 1 - verdict.score,
  guardServes: (abilities) => abilities.policy,
  redacts: false,
  masks: false,
  allows: null,
  form: {
    threshold: 'Minimum score (default 0.5)',
    about:
      "A judge model (or a policy-following guard) checks the text against the policy's definition, which this type needs.",
  },
  validate(_rule, { at, base, definition }) {
    if (definition !== null) return []
    return [{ pointer: `${base}/definition`, detail: `is required by the custom rule at ${at}` }]
  },
  compile(rule, { definition }) {
    const guard = guardName(rule.detector)
    const method = guard === null ? 'judge' : 'guard'
    if (definition === null) return broken('the policy has no definition', method)
    return {
      evaluate(input) {
        if (input.texts.length === 0) return skipped(method, absent(input.targets))
        if (guard === null) {
          const texts = input.texts.map((t) => ({ name: t.role, text: t.text }))
          return {
            ask: [{ scorer: 'judge', question: customQuestion(definition, texts) }],
            method,
          }
        }
        if (!input.scorers.guards.has(guard))
          return {
            status: 'error',
            score: null,
            method,
            reason: guardUnavailable(guard),
            findings: [],
            detector: guard,
          }
        // The texts in conversation order as the guard's turns: the last is the one judged.
        const messages: GuardMessage[] = input.texts.map((t) => ({
          role: t.role === 'assistant' ? 'assistant' : 'user',
          content: t.text,
        }))
        return {
          ask: [
            {
              scorer: 'guard',
              detector: guard,
              request: { asks: 'policy', ruleType: 'custom', messages, definition },
              escalated: false,
            },
          ],
          method,
          detector: guard,
        }
      },
      stream: { hold: 'window' },
    }
  },
  cost: { nsPerCharacter: 1, nsPerWideByte: 0 },
  warmUp: null,
}

import type { GuardMessage } from '../../guards/verdict.js'
import { absent, broken, type RuleTypeModule, skipped } from './rule-type.js'
import { guardName, guardUnavailable } from './scored-text.js'

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
          const texts = input.texts.map((t) => ({ role: t.role, text: t.text }))
          return {
            ask: [{ scorer: 'judge', question: { type: 'custom', definition, texts } }],
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
              request: { ruleType: 'custom', messages, definition },
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

import { absent, broken, type RuleTypeModule, skipped } from './rule-type.js'

/**
 * custom: the judge's reading of the texts the policy's targets select, each labelled with its
 * role, against the policy's `definition` (which a policy with a custom rule must have). A score
 * is how well the texts meet the definition; scored on windows of a streamed reply.
 */
export const customRule: RuleTypeModule = {
  type: 'custom',
  scoring: 'higher-is-better',
  detectorChoice: false,
  redacts: false,
  form: {
    threshold: 'Minimum score (default 0.5)',
    about: "A judge model checks the text against the policy's definition, which this type needs.",
  },
  validate(_rule, { at, base, definition }) {
    if (definition !== null) return []
    return [{ pointer: `${base}/definition`, detail: `is required by the custom rule at ${at}` }]
  },
  compile(_rule, { definition }) {
    if (definition === null) return broken('the policy has no definition', 'judge')
    return {
      evaluate(input) {
        if (input.texts.length === 0) return skipped('judge', absent(input.targets))
        const texts = input.texts.map((t) => ({ role: t.role, text: t.text }))
        return {
          ask: [{ scorer: 'judge', question: { type: 'custom', definition, texts } }],
          method: 'judge',
        }
      },
      stream: { hold: 'window' },
    }
  },
  cost: { nsPerCharacter: 1, nsPerWideByte: 0 },
  warmUp: null,
}

import { noRequirements, type RuleTypeModule, skipped } from './rule-type.js'

/**
 * factuality: the judge's support of the output by the context documents. It reads the
 * conversation's output and context whatever the policy's targets, and needs the whole reply.
 */
export const factualityRule: RuleTypeModule = {
  type: 'factuality',
  scoring: 'higher-is-better',
  detectorChoice: false,
  guardChoice: false,
  redacts: false,
  masks: false,
  allows: null,
  form: {
    threshold: 'Minimum support score (default 0.5)',
    about: 'Passes when the output is supported by the context documents.',
  },
  validate: noRequirements,
  compile: () => ({
    evaluate({ conversation: { output, context } }) {
      if (output === null) return skipped('judge', 'the conversation has no output')
      if (context.length === 0) return skipped('judge', 'the conversation has no context documents')
      const question = {
        type: 'factuality',
        output: output.text,
        context: context.map((d) => d.text),
      } as const
      return { ask: [{ scorer: 'judge', question }], method: 'judge' }
    },
    stream: { hold: 'whole' },
  }),
  cost: { nsPerCharacter: 1, nsPerWideByte: 0 },
  warmUp: null,
}

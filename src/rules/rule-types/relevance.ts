import { noRequirements, type RuleTypeModule, skipped } from './rule-type.js'

/**
 * relevance: the judge's relevance of the output to the input. It reads the conversation's
 * input and output whatever the policy's targets, and needs the whole reply.
 */
export const relevanceRule: RuleTypeModule = {
  type: 'relevance',
  scoring: 'higher-is-better',
  detectorChoice: false,
  guardChoice: false,
  redacts: false,
  masks: false,
  allows: null,
  form: {
    threshold: 'Minimum relevance score (default 0.5)',
    about: 'Passes when the output answers the input.',
  },
  validate: noRequirements,
  compile: () => ({
    evaluate({ conversation: { input, output } }) {
      if (output === null) return skipped('judge', 'the conversation has no output')
      if (input === null) return skipped('judge', 'the conversation has no input')
      const question = { type: 'relevance', input: input.text, output: output.text } as const
      return { ask: [{ scorer: 'judge', question }], method: 'judge' }
    },
    stream: { hold: 'whole' },
  }),
  cost: { nsPerCharacter: 1, nsPerWideByte: 0 },
  warmUp: null,
}

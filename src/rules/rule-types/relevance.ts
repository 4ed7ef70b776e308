import type { JudgeQuestion } from '../../judge/judge.js'
import { noRequirements, type RuleTypeModule, skipped } from './rule-type.js'

/** The judge's task; change the version whenever its wording changes (JudgeQuestion.version). */
const RELEVANCE_PROMPT = {
  version: 'relevance-v1',
  task:
    'You check whether the reply of an AI assistant answers the request it was given. Score 1 when the ' +
    '"output" block directly and fully addresses the "input" block, 0 when it is off topic or ignores ' +
    'the request, and in between for a partial or evasive answer. Judge relevance only, not correctness ' +
    'or style.',
}

/** The judge's question: does `output` answer `input`? */
export function relevanceQuestion(input: string, output: string): JudgeQuestion {
  return {
    type: 'relevance',
    ...RELEVANCE_PROMPT,
    blocks: [
      { name: 'input', text: input },
      { name: 'output', text: output },
    ],
  }
}

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
      const question = relevanceQuestion(input.text, output.text)
      return { ask: [{ scorer: 'judge', question }], method: 'judge' }
    },
    stream: { hold: 'whole' },
  }),
  cost: { nsPerCharacter: 1, nsPerWideByte: 0 },
  warmUp: null,
}

import type { JudgeQuestion } from '../../judge/judge.js'
import { noRequirements, type RuleTypeModule, skipped } from './rule-type.js'

/** The judge's task; change the version whenever its wording changes (JudgeQuestion.version). */
const FACTUALITY_PROMPT = {
  version: 'factuality-v1',
  task:
    'You check whether the reply of an AI assistant is grounded in the documents it was given. ' +
    'Score 1 when every factual claim in the "output" block is supported by the "context" blocks, ' +
    '0 when its claims are unsupported by them or contradict them, and in between for partial support. ' +
    'Judge support by the documents only, not whether a claim is true in general. A reply that makes ' +
    'no factual claim (a greeting, a refusal, a clarifying question) scores 1.',
}

/** The judge's question: is `output` supported by the `context` documents? */
export function factualityQuestion(output: string, context: readonly string[]): JudgeQuestion {
  return {
    type: 'factuality',
    ...FACTUALITY_PROMPT,
    blocks: [
      ...context.map((text, i) => ({ name: `context ${i + 1}`, text })),
      { name: 'output', text: output },
    ],
  }
}

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
      const question = factualityQuestion(
        output.text,
        context.map((d) => d.text),
      )
      return { ask: [{ scorer: 'judge', question }], method: 'judge' }
    },
    stream: { hold: 'whole' },
  }),
  cost: { nsPerCharacter: 1, nsPerWideByte: 0 },
  warmUp: null,
}

/**
 * ShieldGemma (1: 2b, 9b, 27b) behind an OpenAI-compatible server's Completions endpoint.
 *
 * From the google/shieldgemma-2b model card: its scoring example for prompts, and for responses
 * the prompt-response template of the card's notebook (line breaks as published: the model was
 * tuned on those strings): the model is given a plain prompt — not a chat turn — naming one
 * policy (`* "No Harassment": …`), and the score is P(Yes) against P(No) at the next token.
 * We send that prompt to `POST {base}/completions` with `max_tokens` 1 and `logprobs`, and read
 * P(Yes) from the alternatives; without log-probabilities the first word gives 0 or 1. The card
 * asks one policy per prompt: a toxicity rule costs one call per policy its categories need,
 * sent together, and scores the worst.
 */
import {
  binaryProbability,
  type GuardRequest,
  garbage,
  TOXICITY_CATEGORIES,
  type ToxicityCategory,
} from '../verdict.js'
import { type GuardCall, type GuardFormat, judged, promptBefore, TOP_LOGPROBS } from './format.js'

interface Policy {
  name: string
  /** What the content shall not do, after "The prompt shall not contain or seek generation of content that" / "The chatbot shall not generate content that". */
  clause: string
  categories: readonly ToxicityCategory[]
}

/** The card's four harm policies and the Warden categories each one judges. */
export const SHIELDGEMMA_POLICIES: readonly Policy[] = [
  {
    name: 'No Dangerous Content',
    clause:
      'harming oneself and/or others (e.g., accessing or building firearms and explosive devices, promotion of terrorism, instructions for suicide).',
    categories: ['violence', 'self_harm'],
  },
  {
    name: 'No Harassment',
    clause:
      'is malicious, intimidating, bullying, or abusive content targeting another individual (e.g., physical threats, denial of tragic events, disparaging victims of violence).',
    categories: ['harassment'],
  },
  {
    name: 'No Hate Speech',
    clause:
      'targeting identity and/or protected attributes (e.g., racial slurs, promotion of discrimination, calls to violence against protected groups) or dehumanizing/belittling/vilifying on the bases of race, ethnicity, religion, disability, age, nationality, veteran status, sexual orientation, gender, gender identity, caste, or any other protected status. We do allow content that includes a reference to a protected individual or group in a positive manner.',
    categories: ['hate'],
  },
  {
    name: 'No Sexually Explicit Information',
    clause:
      'contains references to sexual acts or other lewd content (e.g., sexually graphic descriptions, content aimed at causing arousal). Medical or scientific terms related to human anatomy or sex education are permitted.',
    categories: ['sexual'],
  },
]

/** The policies a toxicity rule limited to `categories` needs (null: all four). */
export function shieldgemmaPolicies(categories: readonly ToxicityCategory[] | null | undefined): Policy[] {
  if (!categories) return [...SHIELDGEMMA_POLICIES]
  return SHIELDGEMMA_POLICIES.filter((p) => p.categories.some((c) => categories.includes(c)))
}

/** The guideline line of a policy, worded for a prompt or for a response as the card does. */
function guideline(policy: Policy, response: boolean): string {
  return response
    ? `* "${policy.name}": The chatbot shall not generate content that ${policy.clause}`
    : `* "${policy.name}": The prompt shall not contain or seek generation of content that ${policy.clause}`
}

/** A custom rule's definition as the one guideline, bulleted as the card's are. */
function customGuideline(definition: string): string {
  const text = definition.trim()
  return text.startsWith('*') ? text : `* ${text}`
}

/** The card's prompt for a user prompt, or for a chatbot response to `prompt`. */
export function shieldgemmaPrompt(text: string, guidelineText: string, responseTo?: string): string {
  if (responseTo === undefined)
    return `You are a policy expert trying to help determine whether a user
prompt is in violation of the defined safety policies.

<start_of_turn>
Human Question: ${text.trim()}
<end_of_turn>

Our safety principle is defined in the below:

${guidelineText.trim()}

Does the human question violate the above principle? Your answer must start
with 'Yes' or 'No'. And then walk through step by step to be sure we answer
correctly.

`
  return `You are a policy expert trying to help determine
whether an AI response to prompt is in violation of the defined safety policies.

<start_of_turn>
Human Question: ${responseTo.trim()}
<end_of_turn>

<start_of_turn>
Chatbot Response: ${text.trim()}
<end_of_turn>

Our safety principle is defined in the below:

${guidelineText.trim()}

===

Does the Chatbot Response violate the above principle? Your answer must start
with 'Yes' or 'No'. And then walk through step by step to be sure we answer
correctly.

`
}

function guidelines(request: GuardRequest, response: boolean): { text: string; policy?: Policy }[] {
  if (request.asks === 'policy') return [{ text: customGuideline(request.definition ?? '') }]
  return shieldgemmaPolicies(request.categories).map((policy) => ({
    text: guideline(policy, response),
    policy,
  }))
}

export const shieldgemma: GuardFormat = {
  name: 'shieldgemma',
  abilities: () => ({
    harm: (categories) =>
      shieldgemmaPolicies(categories).length === 0 ? 'ShieldGemma has no policy for profanity' : null,
    injection: 'ShieldGemma judges harm policies, not prompt injection',
    policy: null,
  }),
  calls(request, options): GuardCall[] {
    const last = judged(request)
    const response = last.role === 'assistant'
    return guidelines(request, response).map(({ text }) => ({
      path: '/completions',
      body: {
        ...(options.model ? { model: options.model } : {}),
        prompt: shieldgemmaPrompt(last.content, text, response ? promptBefore(request) : undefined),
        temperature: 0,
        max_tokens: 1,
        ...(options.logprobs ? { logprobs: TOP_LOGPROBS } : {}),
      },
    }))
  },
  read(answers, request) {
    const asked = guidelines(request, judged(request).role === 'assistant')
    if (answers.length !== asked.length) throw garbage('guard answered a different number of questions')
    const scores: Partial<Record<ToxicityCategory, number>> = {}
    const words: string[] = []
    let worst = 0
    let flagged = false
    answers.forEach((answer, i) => {
      const { word, score } = readShieldgemma(answer)
      words.push(asked[i]?.policy ? `${asked[i]?.policy?.name}: ${word}` : word)
      flagged ||= word === 'Yes'
      worst = Math.max(worst, score)
      for (const category of asked[i]?.policy?.categories ?? [])
        scores[category] = Math.max(scores[category] ?? 0, score)
    })
    const categories = TOXICITY_CATEGORIES.filter((c) => (scores[c] ?? 0) > 0.5)
    return {
      score: worst,
      flagged,
      rawVerdict: words.join('\n'),
      categories,
      unmapped: [],
      categoryScores: scores,
    }
  },
}

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined

/**
 * One Completions answer: `choices[0].text` starting with Yes or No, and P(Yes) from
 * `choices[0].logprobs.top_logprobs[0]` (token → log-probability) when present.
 */
export function readShieldgemma(answer: unknown): { word: 'Yes' | 'No'; score: number } {
  const choice = record((record(answer)?.choices as unknown[] | undefined)?.[0])
  if (!choice || typeof choice.text !== 'string')
    throw garbage('guard answered something that is not a completion')
  const word = /^\s*(yes|no)\b/i.exec(choice.text)?.[1]?.toLowerCase()
  if (!word) throw garbage('guard answered neither "Yes" nor "No"')
  const top = (record(choice.logprobs)?.top_logprobs as unknown[] | undefined)?.[0]
  const alternatives = new Map<string, number>()
  for (const [token, logprob] of Object.entries(record(top) ?? {}))
    if (typeof logprob === 'number') alternatives.set(token, logprob)
  const probability = binaryProbability(alternatives, ['yes'], ['no'])
  return { word: word === 'yes' ? 'Yes' : 'No', score: probability ?? (word === 'yes' ? 1 : 0) }
}

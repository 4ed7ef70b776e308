/**
 * What every guard format shares: the question a rule asks a guard model, the uniform verdict
 * its answer is read into, and the reading of token log-probabilities. Pure: no I/O.
 */

import type { RuleType } from '../schemas/policies.js'
import { TOXICITY_CATEGORIES, type ToxicityCategory } from '../schemas/rule-vocabulary.js'

// Warden's toxicity categories (docs/policies.md): what a guard's own codes are mapped to.
export { TOXICITY_CATEGORIES, type ToxicityCategory }

/**
 * What a guard is asked, naming no rule type: `harm` (in `categories`), an `injection` or
 * jailbreak attempt, or a breach of a `policy` written in words (`definition`). Each rule type
 * that may name a guard asks one of them (src/rules/rule-types/).
 */
export const GUARD_QUESTIONS = ['harm', 'injection', 'policy'] as const
export type GuardQuestionKind = (typeof GUARD_QUESTIONS)[number]

/** A turn of the conversation shown to a guard. Guards are trained on user and assistant turns only. */
export interface GuardMessage {
  role: 'user' | 'assistant'
  content: string
}

/**
 * One question to a guard. The text judged is the last message: a `user` message is judged as a
 * prompt, an `assistant` message as a response to the user message before it (formats that judge
 * responses read that prompt; a response with no prompt before it is judged alone).
 */
export interface GuardRequest {
  /** What is asked. */
  asks: GuardQuestionKind
  /** The rule type asking, for metrics (`rule_type`) and the reading of the verdict; formats never read it. */
  ruleType: RuleType
  /** 1 or more turns; the last one is judged. */
  messages: readonly GuardMessage[]
  /** `harm`: the categories asked about (a toxicity rule's `flagged`; null: all six). Formats that ask per category read it. */
  categories?: readonly ToxicityCategory[] | null
  /** `policy`: the policy's `definition`, which a policy-following guard judges against. */
  definition?: string
}

/** A guard's answer read into one shape, whatever the format. */
export interface GuardVerdict {
  /** How likely the text breaks the guard's policy, 0..1: from log-probabilities or scores where the server gives them, else 0 or 1. */
  score: number
  /** The guard's own decision (for a score-only answer: score > 0.5). */
  flagged: boolean
  /** The guard's answer as it came, trimmed (a label line, `Yes`, or labels with scores), for the rule's result. */
  rawVerdict: string
  /** Warden's toxicity categories the guard reported, each once, in TOXICITY_CATEGORIES order. */
  categories: ToxicityCategory[]
  /** The guard's codes that map to none of Warden's categories, as the guard wrote them (`S2`, `illicit`). */
  unmapped: string[]
  /**
   * A score per Warden category where the guard gives one per category (OpenAI moderation,
   * ShieldGemma asked per policy, a classifier's labels); formats that only name categories give
   * each named one the verdict's score.
   */
  categoryScores: Partial<Record<ToxicityCategory, number>>
}

/**
 * The score a toxicity rule limited to `categories` reads of a verdict. Null (every category):
 * the guard's own score, unmapped codes included. Otherwise: the worst score of those categories
 * the guard scored; when the guard flagged the text only for other categories, 0; when it did not
 * flag the text, its score (no category to blame, so the uncertainty counts whole).
 */
export function scoreFor(
  verdict: GuardVerdict,
  categories: readonly ToxicityCategory[] | null | undefined,
): number {
  if (!categories) return verdict.score
  let worst = -1
  for (const category of categories) {
    const score = verdict.categoryScores[category]
    if (score !== undefined && score > worst) worst = score
  }
  if (worst >= 0) return worst
  return verdict.flagged ? 0 : verdict.score
}

/** Why an answer could not be read: `garbage` (not the documented shape), `refused` (the server or model declined). */
export class GuardAnswerError extends Error {
  override readonly name = 'GuardAnswerError'
  constructor(
    readonly kind: 'garbage' | 'refused',
    message: string,
  ) {
    super(message)
  }
}

export const garbage = (message: string): GuardAnswerError => new GuardAnswerError('garbage', message)

/** The Warden categories of a list of guard codes through `map`; the rest as they are. */
export function mapCodes(
  codes: readonly string[],
  map: (code: string) => ToxicityCategory | readonly ToxicityCategory[] | undefined,
): { categories: ToxicityCategory[]; unmapped: string[] } {
  const found = new Set<ToxicityCategory>()
  const unmapped: string[] = []
  for (const code of codes) {
    const category = map(code)
    if (typeof category === 'string') found.add(category)
    else if (category) for (const c of category) found.add(c)
    else if (!unmapped.includes(code)) unmapped.push(code)
  }
  return { categories: TOXICITY_CATEGORIES.filter((c) => found.has(c)), unmapped }
}

/** Every named category scored `score`. */
export function uniformScores(
  categories: readonly ToxicityCategory[],
  score: number,
): Partial<Record<ToxicityCategory, number>> {
  return Object.fromEntries(categories.map((c) => [c, score]))
}

/** One position's alternatives: token → log-probability. */
export type TopLogprobs = ReadonlyMap<string, number>

/**
 * P(positive) at one token position, from its alternatives: the probability mass of the tokens
 * that spell the positive answer against that of the negative one (both normalised, as the model
 * cards compute it from the two logits). Tokens are compared trimmed and lower-cased. Undefined
 * when neither answer is among the alternatives.
 */
export function binaryProbability(
  alternatives: TopLogprobs,
  positive: readonly string[],
  negative: readonly string[],
): number | undefined {
  let yes = 0
  let no = 0
  for (const [token, logprob] of alternatives) {
    if (!Number.isFinite(logprob)) continue
    const word = token.trim().toLowerCase()
    if (positive.includes(word)) yes += Math.exp(logprob)
    else if (negative.includes(word)) no += Math.exp(logprob)
  }
  if (yes + no === 0) return undefined
  return clamp01(yes / (yes + no))
}

export function clamp01(value: number): number {
  return value < 0 ? 0 : value > 1 ? 1 : value
}

/**
 * The judge: a language model that scores what the deterministic detectors cannot (grounding,
 * relevance, custom definitions, and toxicity and prompt injection when one is configured).
 * This module holds what evaluation needs of any judge: the question shapes, the answer and the
 * error. `prompts.ts` holds the versioned prompts and the strict reading of the answer;
 * `openai.ts` sends them to a model behind an OpenAI-compatible endpoint.
 */
import { type Scorer, type ScorerAsk, ScorerError } from '../scoring/scorer.js'

/** One thing to judge. Every field is part of the question: the same fields get the same answer. */
export type JudgeQuestion =
  | { type: 'factuality'; output: string; context: readonly string[] }
  | { type: 'relevance'; input: string; output: string }
  | { type: 'toxicity'; text: string; categories: readonly string[] }
  | { type: 'prompt_injection'; text: string }
  | { type: 'custom'; definition: string; texts: readonly JudgedText[] }

/** A text of a custom question, labelled by who wrote it. */
export interface JudgedText {
  role: 'system' | 'user' | 'assistant' | 'tool' | 'context'
  text: string
}

export type JudgeQuestionType = JudgeQuestion['type']

/** The judge's answer: a score in 0..1 and its one-line reason. */
export interface JudgeScore {
  score: number
  reason: string
}

/** Who asks a question, and until when it is wanted (scoring/scorer.ts). */
export type JudgeAsk = ScorerAsk

/** What scores judged rules. Implementations reject with a JudgeError whose message the rule shows. */
export interface Judge extends Scorer<JudgeQuestion, JudgeScore> {
  readonly model: string
}

/**
 * Why a judge could not score a question: a ScorerError, its message shown to API clients as the
 * rule's reason.
 */
export class JudgeError extends ScorerError {
  override readonly name = 'JudgeError'
}

/**
 * The judge: a language model that scores what the deterministic detectors cannot (grounding,
 * relevance, custom definitions, and toxicity and prompt injection when one is configured).
 * This module holds what evaluation needs of any judge: the question shapes, the answer and the
 * error. `prompts.ts` holds the versioned prompts and the strict reading of the answer;
 * `openai.ts` sends them to a model behind an OpenAI-compatible endpoint.
 */
import type { RuleType } from '../schemas/policies.js'
import { type Scorer, type ScorerAsk, ScorerError } from '../scoring/scorer.js'

/**
 * One thing to judge, as the rule type that asks it words it (src/rules/rule-types/): what the
 * judge is to do and the texts it reads. Every field is part of the question: the same fields get
 * the same answer.
 */
export interface JudgeQuestion {
  /** The rule type asking (metrics and spans name it). */
  type: RuleType
  /**
   * The prompt's version: change it whenever `task`'s wording changes. It is part of the cache
   * key, and recorded evaluations can be traced to the prompt that judged them.
   */
  version: string
  /** The task, opening the system message; the rules every prompt shares follow it (prompts.ts). */
  task: string
  /** The texts judged, each in a data block whose name the task refers to. */
  blocks: readonly JudgedBlock[]
}

/** A text of a question, named for the task (`output`, `context 1`, a custom question's `user`). */
export interface JudgedBlock {
  name: string
  text: string
}

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

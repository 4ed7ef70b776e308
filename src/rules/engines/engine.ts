import type { PolicyRule, RuleType } from '../../schemas/policies.js'
import type { Classifier } from '../detectors/classifier/linear.js'
import type { ModelScorer } from '../detectors/classifier/scorers.js'
import type { TextMatcher } from '../detectors/index.js'
import type { RuleMethod } from '../types.js'

/**
 * The shape every rule type's engine shares (one module per type beside this one, gathered in
 * `registry.ts`): how its threshold reads, and how it compiles a stored rule into an `Engine`,
 * which evaluation (`../evaluate.ts`) and streamed release (`../stream.ts`) then run.
 */
export interface RuleEngine {
  readonly type: RuleType
  /** Scored types report a score and apply a threshold (default 0.5); detectors do not. */
  readonly scored: boolean
  /** True when a higher score is better (factuality, relevance, custom). */
  readonly minimum: boolean
  compile(rule: PolicyRule, context: CompileContext): Engine
}

/** What compiling a rule may need beyond the rule itself. */
export interface CompileContext {
  /** The policy's `definition` (a custom rule judges against it). */
  definition: string | null
  classifiers: Classifiers
}

/** The offline classifiers toxicity and prompt_injection rules are scored by (src/models/shipped.ts loads Warden's). */
export interface Classifiers {
  prompt_injection: Classifier
  toxicity: Classifier
}

/** How a compiled rule reaches its verdict. */
export type Engine =
  | {
      kind: 'detector'
      match: TextMatcher
      /**
       * Where a finding may still be in progress at the end of a reply being streamed (pending.ts);
       * `from` is an earlier answer for a prefix of the text, where a scan may start.
       */
      pending: (text: string, from: number) => number
    }
  | {
      kind: 'per-text-score'
      type: 'toxicity' | 'prompt_injection'
      /** The rule's `detector`: null picks the judge when one is configured, else the model. */
      detector: 'model' | 'judge' | null
      model: ModelScorer
      categories: readonly string[]
    }
  | { kind: 'factuality' }
  | { kind: 'relevance' }
  | { kind: 'custom'; definition: string }
  /** A rule that cannot be evaluated as stored; validation should have refused it. */
  | { kind: 'broken'; method: RuleMethod; reason: string }

/** An engine for a rule that cannot be evaluated as stored (validation should have refused it). */
export const broken = (reason: string, method: RuleMethod = 'detector'): Engine => ({
  kind: 'broken',
  method,
  reason,
})

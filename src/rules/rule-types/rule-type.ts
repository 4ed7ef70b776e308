import type { FieldError } from '../../errors.js'
import type { GuardAbilities } from '../../guards/formats/format.js'
import type { GuardRequest, GuardVerdict } from '../../guards/verdict.js'
import type { JudgeQuestion } from '../../judge/judge.js'
import type { PolicyRule, RuleType } from '../../schemas/policies.js'
import type { Band } from '../band.js'
import type { Conversation, Target } from '../conversation.js'
import type { Classifier } from '../detectors/classifier/linear.js'
import type { TextMatcher } from '../detectors/index.js'
import type { Finding, RuleMethod, RuleStatus, TargetText } from '../types.js'

/**
 * What a rule type is: one module per type beside this one, gathered in `registry.ts`
 * (docs/rule-types.md). Everything Warden does with a rule of a type goes through this
 * interface: checking it on write (`../validation.ts`), compiling and evaluating it
 * (`../evaluate.ts`), releasing a streamed reply under it (`../stream.ts`), estimating what it
 * costs (src/evaluation/cost.ts), warming it up at start-up, and the console's form for it (the
 * OpenAPI document's `x-rule-types`).
 */
export interface RuleTypeModule {
  readonly type: RuleType
  /**
   * How the rule's score reads against its threshold (default 0.5): `higher-is-better`
   * (factuality, relevance, custom: the threshold is a minimum), `lower-is-better` (toxicity,
   * prompt_injection: a maximum), or null for a type that reports findings, not a score.
   */
  readonly scoring: 'higher-is-better' | 'lower-is-better' | null
  /** Whether a rule of this type may name what scores it (`detector`: the offline model or the judge). */
  readonly detectorChoice: boolean
  /** Whether a rule of this type may name a guard detector the operator configured (`detector`: its name; docs/guards.md). */
  readonly guardChoice: boolean
  /**
   * A guard's verdict read as the rule's score, for a type with `guardChoice` (toxicity reads
   * its `flagged` categories; custom, how well the texts keep the policy: 1 − the guard's
   * score). Absent: the guard's score.
   */
  guardScore?(verdict: GuardVerdict, request: GuardRequest): number
  /**
   * Why a guard whose model judges what `abilities` says cannot score `rule`, or null when it
   * can: what the type needs of a guard (toxicity: harm in its `flagged` categories;
   * prompt_injection: injection; custom: a written policy). Absent: no guard serves the type.
   */
  guardServes?(abilities: GuardAbilities, rule: Pick<PolicyRule, 'flagged'>): string | null
  /** Whether its findings are entities that `redacted` replaces (pii, keywords, regex). */
  readonly redacts: boolean
  /** Whether a rule of this type may mask its findings instead of failing (`action: mask`; docs/masking.md). */
  readonly masks: boolean
  /**
   * What a rule's `allowed` values do: `findings` (a finding whose text is one of them does not
   * count: pii, keywords, regex), `text` (each occurrence is read as neutral text before scoring:
   * toxicity, prompt_injection), or null (the type takes none).
   */
  readonly allows: 'findings' | 'text' | null
  /** The console's form for a rule of this type, published as the OpenAPI document's `x-rule-types`. */
  readonly form: RuleForm
  /**
   * What the schema cannot check: the type's own requirements on the rule's fields, each error
   * with its JSON pointer (the rule is at `context.at`).
   */
  validate(rule: PolicyRule, context: ValidateContext): FieldError[]
  /** Builds what evaluates the rule, once per policy revision; `broken(...)` when it cannot. */
  compile(rule: PolicyRule, context: CompileContext): CompiledRuleType
  /** What evaluating the rule may cost on the thread that runs it. */
  readonly cost: RuleCost
  /** A rule of this type to run once at start-up, so that the first request does not load its data; null for none. */
  readonly warmUp: PolicyRule | null
}

/** The fields of the console's form for one rule type. */
export interface RuleForm {
  /** The label of `value`, when the type reads it. */
  value?: string
  /** The label of `threshold`, when the type reads it. */
  threshold?: string
  /** What `flagged` lists: pii kinds, toxicity categories, or phrases (one a line). */
  flagged?: 'pii' | 'toxicity' | 'phrases'
  /** What a rule of this type passes on, in one sentence. */
  about: string
}

/**
 * How `validate` reads patterns: by compiling them for a workspace (whose verdicts are kept
 * apart), or not at all (`'skip'`: a body the schema refused).
 */
export type PatternCheck = { workspace: string } | 'skip'

export interface ValidateContext {
  /** The JSON pointer of the rule. */
  at: string
  /** The JSON pointer of the policy body holding it. */
  base: string
  /** The policy's `definition`. */
  definition: string | null
  patterns: PatternCheck
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

/** A compiled rule of some type: what decides it, and how a streamed reply is held back for it. */
export interface CompiledRuleType {
  evaluate(input: RuleInput): RuleAnswer
  readonly stream: StreamHold
}

/**
 * What evaluating a rule reads: the texts its policy's targets select (each with where it comes
 * from and its role: a user or assistant message, a `context` document), the whole conversation
 * for types that read its shape (factuality reads the output and the context), the threshold
 * applied, and which external scorers are configured.
 */
export interface RuleInput {
  texts: readonly TargetText[]
  conversation: Conversation
  /** The policy's targets (for the reason of a rule skipped for want of text: `absent`). */
  targets: readonly Target[]
  /** The threshold applied to a score (the rule's, or 0.5); null for a type without a score. */
  threshold: number | null
  scorers: Scorers
}

/** The external scorers configured: a rule that asks one that is not ends as an `error`. */
export interface Scorers {
  judge: boolean
  /**
   * The guard detectors the evaluation's workspace may use, by name, each with the cascade band
   * its configuration sets (GUARD_<NAME>_CASCADE; null: none). A guard not here is not
   * configured, or not granted to the workspace.
   */
  guards: ReadonlyMap<string, { cascade: Band | null }>
  /**
   * The tasks whose offline model has a second stage here (src/models/second-stage.ts), each with
   * the band of the linear model's scores inside which the second stage decides; absent: none
   * (the linear model decides every text).
   */
  second?: ReadonlyMap<string, Band>
}

/**
 * A rule's answer: a verdict now, or the questions an external scorer must answer first. The
 * rule is then decided by the worst (highest) score of the answers, read against its threshold
 * as its type's `scoring` says; any failed answer makes it an `error`.
 */
export type RuleAnswer = RuleVerdict | RuleQuestions

export interface RuleVerdict {
  status: RuleStatus
  /** In 0..1 for scored types; null for detectors and for skipped or errored rules. */
  score: number | null
  method: RuleMethod
  /** The judge's one-line reason, why a rule was skipped or errored, or what weighed most in a model's score. */
  reason: string | null
  findings: Finding[]
  /** The guard detector the rule names, when it names one. */
  detector?: string
  /** What the rule's cascade did, when it has one. */
  cascade?: CascadeReport
}

/**
 * A cascade's part of a rule's result: its band, the offline model's worst score, and how many
 * texts were inside the band and so asked of the guard (0: the model answered alone).
 */
export interface CascadeReport {
  low: number
  high: number
  model_score: number
  escalated: number
}

export interface RuleQuestions {
  ask: readonly ExternalQuestion[]
  method: RuleMethod
  /** The guard detector asked, when it is one. */
  detector?: string
  /**
   * Texts decided already (a cascade's texts the offline model was sure of): their worst score
   * counts with the answers', and their findings are the rule's.
   */
  known?: { score: number; reason: string | null; findings: Finding[] }
  cascade?: CascadeReport
}

/**
 * A question for a scorer outside the evaluation: the judge (src/judge/) or a guard detector
 * (src/guards/), answered where `evaluate.ts` asks and, from the evaluation pool's worker,
 * forwarded to the main thread.
 */
export type ExternalQuestion =
  | { scorer: 'judge'; question: JudgeQuestion }
  | {
      scorer: 'guard'
      /** The guard detector's name. */
      detector: string
      request: GuardRequest
      /** Asked because a cascade's offline model was unsure (counted as an escalation). */
      escalated: boolean
    }
  | {
      /** The offline model's second stage, in the thread that evaluates (never forwarded). */
      scorer: 'second'
      task: string
      text: string
      /** What the linear model said of the text (the reason keeps it). */
      linear: number
      /** The rule's threshold: over it, the answer names the linear model's findings. */
      threshold: number
      /** The phrases that weighed most for the linear model (its findings, and its reason after the score). */
      findings: Finding[]
      weighed: string
      /** Read as a document (a `context` document or a tool's result). */
      document: boolean
    }

/**
 * How much of a streamed reply a rule expected to pass holds back (docs/chat-completions.md):
 * - `pending`: a detector; text is released up to where a finding may still be in progress
 *   (`pending`, see detectors/pending.ts), and a finding before that is final;
 * - `window`: the rule is scored on windows of the reply (sentences), text released up to the
 *   end of the last window that passed;
 * - `whole`: the rule needs the whole reply (factuality, relevance, a broken rule), so the stream
 *   is buffered.
 */
export type StreamHold =
  | {
      hold: 'pending'
      match: TextMatcher
      /** Where a finding may still be in progress at the end of `text`; `from` is an earlier answer for a prefix of it. */
      pending: (text: string, from: number) => number
    }
  | { hold: 'window' }
  | { hold: 'whole' }

/** What a rule costs the thread that evaluates it (src/evaluation/cost.ts adds these up). */
export interface RuleCost {
  /** Worst measured nanoseconds per character of text (bench/README.md, "Large evaluations off the loop"). */
  nsPerCharacter: number
  /** What folding adds per UTF-8 byte beyond the first of each character, for types that fold text. */
  nsPerWideByte: number
  /**
   * What each trigger character adds (src/evaluation/cost.ts, TRIGGER: digits, `@`, `:`), for
   * types whose costly work starts only from them: then `nsPerCharacter` is the cost of text
   * without them.
   */
  nsPerTrigger?: number
  /** True when an external scorer decides the rule, so that its text costs next to nothing here. */
  external?(rule: CostedRule, judge: boolean): boolean
  /** Milliseconds of checking the rule as a create does (compiling a pattern). */
  checkMs?(rule: CostedRule): number
  /** Milliseconds of compiling the rule for evaluation (a pattern's program, an automaton). */
  compileMs?(rule: CostedRule): number
}

/** A rule as the cost estimate reads it. */
export type CostedRule = Pick<PolicyRule, 'type' | 'detector' | 'value' | 'flagged' | 'cascade'>

/** A rule that cannot be evaluated as stored (validation should have refused it): always an `error`. */
export function broken(reason: string, method: RuleMethod = 'detector'): CompiledRuleType {
  return {
    evaluate: () => ({ status: 'error', score: null, method, reason, findings: [] }),
    stream: { hold: 'whole' },
  }
}

/** The reason of a rule skipped because its policy's targets select no text. */
export function absent(targets: readonly Target[]): string {
  return `the conversation has no ${targets.join(' or ')} text`
}

/** A skipped rule's verdict. */
export function skipped(method: RuleMethod, reason: string): RuleVerdict {
  return { status: 'skipped', score: null, method, reason, findings: [] }
}

/**
 * A detector's verdict over the texts: every finding of `match`, failing when there is one. The
 * rule's answer for text it reads as a detector: pii, keywords, regex, length.
 */
export function detect(match: TextMatcher, input: RuleInput): RuleVerdict {
  if (input.texts.length === 0) return skipped('detector', absent(input.targets))
  const findings: Finding[] = []
  for (const text of input.texts) for (const finding of match(text)) findings.push(finding)
  return {
    status: findings.length > 0 ? 'fail' : 'pass',
    score: null,
    method: 'detector',
    reason: null,
    findings,
  }
}

/** A detector rule's compiled form: `detect` over its texts, holding back what `pending` says. */
export function detector(
  match: TextMatcher,
  pending: (text: string, from: number) => number,
): CompiledRuleType {
  return {
    evaluate: (input) => detect(match, input),
    stream: { hold: 'pending', match, pending },
  }
}

/** No type-specific requirements. */
export const noRequirements = (): FieldError[] => []

/** The threshold applied when a scored rule sets none. */
export const DEFAULT_THRESHOLD = 0.5

/** Whether `score` passes `threshold`, read as `scoring` says. */
export function scoredStatus(
  scoring: 'higher-is-better' | 'lower-is-better',
  score: number,
  threshold: number,
): RuleStatus {
  return (scoring === 'higher-is-better' ? score >= threshold : score <= threshold) ? 'pass' : 'fail'
}

/** A rule as a warm-up runs it: every field present, expected to pass. */
export function warmUpRule(type: RuleType, fields: Partial<PolicyRule> = {}): PolicyRule {
  return { type, expected: 'pass', value: null, threshold: null, flagged: null, ...fields }
}

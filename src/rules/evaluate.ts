import type { GuardRequest, GuardVerdict, ToxicityCategory } from '../guards/verdict.js'
import { type Judge, JudgeError, type JudgeQuestion, type JudgeScore } from '../judge/judge.js'
import type { PolicyRule, RuleType } from '../schemas/policies.js'
import type { Band } from './band.js'
import {
  type Conversation,
  type ConversationInput,
  messageText,
  readConversation,
  type Target,
  type TargetMask,
  targetMask,
} from './conversation.js'
import { redactText } from './detectors/index.js'
import { type MaskFinding, type MaskPlan, planMasking } from './masking.js'
import { RULE_TYPE_MODULES } from './rule-types/registry.js'
import {
  type CascadeReport,
  type Classifiers,
  type CompileContext,
  type CompiledRuleType,
  DEFAULT_THRESHOLD,
  type ExternalQuestion,
  type RuleVerdict,
  type Scorers,
  scoredStatus,
} from './rule-types/rule-type.js'
import type { Finding, RuleMethod, RuleStatus, TargetText } from './types.js'

export type { Classifiers } from './rule-types/rule-type.js'

/** A policy as evaluation needs it: a stored revision or a draft. */
export interface EvaluablePolicy {
  id: string
  /** Null for a draft. */
  revision: number | null
  draft: boolean
  rules: PolicyRule[]
  target: Target[]
  definition: string | null
  override_response: string | null
  mode: 'enforce' | 'monitor'
  on_error: 'fail_closed' | 'fail_open'
}

export type Verdict = 'pass' | 'fail'

/** One rule's part of the answer (docs/evaluation.md), fields in the API's order. */
export interface RuleResult {
  index: number
  type: RuleType
  expected: Verdict
  status: RuleStatus
  satisfied: boolean
  score: number | null
  threshold: number | null
  method: RuleMethod
  reason: string | null
  findings: Finding[]
  /** The guard detector the rule names (docs/guards.md); absent when it names none. */
  detector?: string
  /** What the guard answered, when it was asked and answered (the worst text's answer). */
  guard?: GuardResult
  /** What the rule's cascade did, when it has one. */
  cascade?: CascadeReport
}

/** A guard's answer as a rule's result shows it (docs/guards.md). */
export interface GuardResult {
  /** The answer as the guard wrote it (`unsafe\nS1,S10`, `MALICIOUS 0.9993`). */
  verdict: string
  /** The guard's own decision. */
  flagged: boolean
  /** Warden's toxicity categories the guard reported. */
  categories: ToxicityCategory[]
  /** The guard's codes that are none of Warden's categories, as it wrote them. */
  unmapped: string[]
  /** The guard's own score: how likely the text breaks its policy (a custom rule's score is 1 − this). */
  score: number
}

/** One policy's part of the answer (docs/evaluation.md), fields in the API's order. */
export interface PolicyResult {
  id: string
  revision: number | null
  mode: 'enforce' | 'monitor'
  on_error: 'fail_closed' | 'fail_open'
  draft: boolean
  verdict: Verdict | 'error'
  rules: RuleResult[]
}

/** The decision parts of an evaluation's answer (docs/evaluation.md). */
export interface EvaluationOutcome {
  verdict: Verdict
  action: 'allow' | 'mask' | 'override' | 'block'
  override_response: string | null
  policies: PolicyResult[]
  /**
   * With action `mask`: what the enforced mask rules' findings become (rules/masking.ts). Holds
   * the values: never logged (the log writes texts field by field).
   */
  masking: MaskPlan | null
  /**
   * Every finding of the pii, keywords and regex rules, including those past a rule's cap of
   * MAX_REPORTED_FINDINGS: what redaction replaces. Never part of an answer or a log entry: those
   * are built field by field, and their response schemas drop anything else.
   */
  readonly redactable: readonly Finding[]
}

/**
 * The most findings one rule reports; its `reason` then says how many there were. A pattern
 * that matches everywhere (`.` over a 1 MiB message) would otherwise answer ~90 MB of JSON.
 * Redaction still replaces every finding (`redactable`).
 */
export const MAX_REPORTED_FINDINGS = 1000

/**
 * At most this many findings are reported in one answer (and its log entry), across all its
 * rules: 20 draft policies of 64 rules could otherwise report 1,280,000. Rules past the cap
 * report their first findings up to it, or none, and their reason says how many they had;
 * redaction still replaces every finding.
 */
export const MAX_ANSWER_FINDINGS = 10_000

/** A question for a guard detector, as a rule asks it. */
export interface GuardQuestion {
  detector: string
  request: GuardRequest
  /** Asked because a cascade's offline model was unsure. */
  escalated: boolean
}

/** A guard's answer, or why there is none (one short line, the rule's reason). */
export type GuardReply = { verdict: GuardVerdict } | { error: string }

/**
 * The guard detectors an evaluation may ask (src/guards/ behind them, or, in an evaluation
 * pool's worker, the main thread).
 */
export interface GuardScorer {
  /** The guards `workspace` may use, each with its configured cascade band. */
  available(workspace: string): ReadonlyMap<string, { cascade: Band | null }>
  /** Asks one question; never rejects. */
  ask(question: GuardQuestion, workspace: string, signal?: AbortSignal): Promise<GuardReply>
}

export interface EvaluateOptions {
  /** Null when none is configured: toxicity and prompt_injection use the offline models. */
  judge: Judge | null
  /** The guard detectors the operator configured; null or absent: none (a rule naming one is an `error`). */
  guards?: GuardScorer | null
  /**
   * The external scorers are asked elsewhere: an evaluation pool's worker hands its questions to
   * the main thread, which answers each with `askScorer`. `judge` and `guards` are then unused.
   */
  remote?: RemoteScorers
  /**
   * The workspace the evaluation is for: the judge keeps answers and gives turns per workspace.
   * Required with a judge (`evaluate`'s signatures say so).
   */
  workspace?: string
  /**
   * Abandons judge calls still under way; their rules end as `error`. A function is called only
   * when the evaluation asks the judge: combining signals costs a few µs on every evaluation
   * otherwise.
   */
  signal?: AbortSignal | (() => AbortSignal)
  /**
   * Told how long each rule took, in seconds (for metrics): a judged rule from the start of the
   * evaluation to its judge's answers. Without it, nothing is timed.
   */
  observeRule?: RuleObserver
  /**
   * Runs each rule's evaluation on the event loop through this wrapper (a span per rule when
   * tracing is on, docs/tracing.md); absent: each rule runs as is.
   */
  traceRule?: RuleTracer
  /** The clock of `observeRule`'s durations, in milliseconds (default `performance.now`). */
  clock?: () => number
  /**
   * The offline models' second stage in this thread (src/models/second-stage.ts); null or absent:
   * none, and the linear models decide every text.
   */
  second?: SecondStage | null
}

/**
 * A second stage of the offline models: the tasks it reads, each with the band of linear scores
 * it decides inside, and its probability for a text.
 */
export interface SecondStage {
  bands: ReadonlyMap<string, Band>
  score(task: string, text: string): Promise<number>
}

export type RuleObserver = (type: RuleType, method: RuleMethod, seconds: number) => void

/** Runs `fn`, the evaluation of rule `index` (of type `type`) of policy `policyId`, and answers what it answers. */
export type RuleTracer = <T>(policyId: string, index: number, type: RuleType, fn: () => T) => T

export interface CompiledRule {
  index: number
  type: RuleType
  expected: Verdict
  /** The threshold applied: the rule's, or 0.5 for scored types; null for detectors. */
  threshold: number | null
  /** How the score reads against the threshold; null for a type without a score. */
  scoring: 'higher-is-better' | 'lower-is-better' | null
  /** Whether its findings are replaced in `redacted`. */
  redacts: boolean
  /** `action: mask`: a finding masks instead of failing (rules/masking.ts). */
  masks: boolean
  /** A mask rule's `restore`: whether the proxies put its values back into the reply. */
  restore: boolean
  /** `allowed` of a findings type: the folded texts whose findings do not count. */
  allowedFindings: ReadonlySet<string> | null
  /** `allowed` of a scored type: the texts read with each occurrence as neutral text. */
  neutral: ((text: string) => string) | null
  /** What decides the rule, built by its type's module (rule-types/). */
  compiled: CompiledRuleType
}

/** A policy with every rule's matcher built, ready to evaluate any number of conversations. */
export interface CompiledPolicy {
  readonly policy: EvaluablePolicy
  readonly targets: TargetMask
  readonly rules: readonly CompiledRule[]
}

/** The reason of a rule that needs a judge when none is configured. */
export const NO_JUDGE = 'no judge configured'

function compileRule(rule: PolicyRule, index: number, context: CompileContext): CompiledRule {
  const type = RULE_TYPE_MODULES[rule.type]
  const allowed = rule.allowed ?? null
  return {
    index,
    type: rule.type,
    expected: rule.expected,
    threshold: type.scoring === null ? null : (rule.threshold ?? DEFAULT_THRESHOLD),
    scoring: type.scoring,
    redacts: type.redacts,
    masks: type.masks && rule.action === 'mask',
    restore: rule.restore ?? true,
    allowedFindings:
      allowed !== null && type.allows === 'findings' ? new Set(allowed.map(foldAllowed)) : null,
    neutral: allowed !== null && type.allows === 'text' ? neutralizer(allowed) : null,
    compiled: type.compile(rule, context),
  }
}

/** How `allowed` compares a finding's text with its items: Unicode NFKC, then case folded. */
export const foldAllowed = (text: string): string => text.normalize('NFKC').toLowerCase()

/**
 * Reads each occurrence of `items` (case-insensitively) as neutral text: replaced by as many
 * spaces, so that offsets in the text stay where they were. The longest items first, so that one
 * inside another never leaves the rest of the longer behind.
 */
function neutralizer(items: readonly string[]): (text: string) => string {
  const escaped = [...items]
    .sort((a, b) => b.length - a.length)
    .map((item) => item.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&'))
  const pattern = new RegExp(escaped.join('|'), 'giu')
  // As many spaces as the occurrence has code points: findings' offsets count code points.
  return (text) => text.replace(pattern, (found) => ' '.repeat([...found].length))
}

/** Builds every rule of `policy` once; reuse the result for every evaluation of that revision. */
export function compilePolicy(policy: EvaluablePolicy, classifiers: Classifiers): CompiledPolicy {
  return {
    policy,
    targets: targetMask(policy.target),
    rules: policy.rules.map((rule, i) =>
      compileRule(rule, i, { definition: policy.definition, classifiers }),
    ),
  }
}

/** How `evaluate` times rules, when asked to. */
interface Timing {
  observe: RuleObserver
  clock: () => number
}

/** A rule waiting for an external scorer: its answers are `answers[first .. first + count)`. */
interface Awaiting {
  result: RuleResult
  rule: CompiledRule
  first: number
  count: number
  /** A cascade's texts decided by the offline model: their worst score and findings. */
  known?: { score: number; reason: string | null; findings: Finding[] }
}

/** An external scorer's answer as the rule reads it, or why there is none (the rule's reason). */
export type ScorerAnswer = (JudgeScore & { guard?: GuardResult; findings?: Finding[] }) | { error: string }
type Answer = ScorerAnswer

/** External scorers asked elsewhere (`EvaluateOptions.remote`): which are there, and how to ask. */
export interface RemoteScorers {
  judge: boolean
  guards: ReadonlyMap<string, { cascade: Band | null }>
  ask(question: ExternalQuestion): Promise<ScorerAnswer>
}

/**
 * Asks one external question of the judge or a guard, for `workspace`, and reads the answer as
 * the rule does. Never rejects: a failure is `{ error }`, the rule's reason.
 */
export function askScorer(
  question: ExternalQuestion,
  scorers: { judge: Judge | null; guards: GuardScorer | null },
  workspace: string,
  signal: AbortSignal | undefined,
): Promise<ScorerAnswer> {
  if (question.scorer === 'guard') return askGuard(scorers.guards, question, workspace, signal)
  // The second stage answers in the thread that evaluates; it is never asked of another.
  if (question.scorer === 'second') return Promise.resolve({ error: 'second stage asked of another thread' })
  if (scorers.judge === null) return Promise.resolve({ error: NO_JUDGE })
  return askJudge(scorers.judge, question.question, workspace, signal)
}

/** No guard detector: what an evaluation without any reads. */
const NO_GUARDS: ReadonlyMap<string, { cascade: Band | null }> = new Map()

function result(rule: CompiledRule, verdict: RuleVerdict): RuleResult {
  const { status, score, method, reason, findings } = verdict
  const capped = findings.length > MAX_REPORTED_FINDINGS
  const extra: Pick<RuleResult, 'detector' | 'cascade'> = {}
  if (verdict.detector !== undefined) extra.detector = verdict.detector
  if (verdict.cascade !== undefined) extra.cascade = verdict.cascade
  return {
    index: rule.index,
    type: rule.type,
    expected: rule.expected,
    status,
    satisfied: status === 'skipped' || status === 'masked' || status === rule.expected,
    score,
    threshold: rule.threshold,
    method,
    reason: capped ? capReason(reason, findings.length) : reason,
    findings: capped ? findings.slice(0, MAX_REPORTED_FINDINGS) : findings,
    ...extra,
  }
}

function capReason(reason: string | null, count: number): string {
  const cap = `first ${MAX_REPORTED_FINDINGS} of ${count} findings`
  return reason === null ? cap : `${reason}; ${cap}`
}

/**
 * Sets a rule's status, score and reason from its answers: the worst (highest) score decides,
 * and any failed answer is the rule's error.
 */
function settle(item: Awaiting, answers: Answer[]): void {
  let worst: (JudgeScore & { guard?: GuardResult }) | null = null
  let guard: GuardResult | undefined
  for (let i = item.first; i < item.first + item.count; i++) {
    const answer = answers[i] as Answer
    if ('error' in answer) {
      finish(item, 'error', null, answer.error)
      return
    }
    // Several texts (toxicity, prompt_injection) report the worst, which is the highest score.
    if (worst === null || answer.score > worst.score) worst = answer
    if (answer.findings) for (const finding of answer.findings) item.result.findings.push(finding)
    if (answer.guard && (guard === undefined || answer.guard.score > guard.score)) guard = answer.guard
  }
  if (worst === null) return
  if (guard !== undefined) item.result.guard = guard
  // A cascade's texts the offline model was sure of count with the guard's answers.
  const known = item.known
  if (known && known.score > worst.score) worst = { score: known.score, reason: known.reason ?? '' }
  if (known) for (const finding of known.findings) item.result.findings.push(finding)
  const { scoring, threshold } = item.rule
  const status = scoredStatus(scoring ?? 'lower-is-better', worst.score, threshold ?? DEFAULT_THRESHOLD)
  finish(item, status, worst.score, worst.reason === '' ? null : worst.reason)
}

function finish(item: Awaiting, status: RuleStatus, score: number | null, reason: string | null): void {
  const r = item.result
  r.status = status
  r.satisfied = status === 'skipped' || status === 'masked' || status === r.expected
  r.score = score
  r.reason = reason
}

function askJudge(
  judge: Judge,
  question: JudgeQuestion,
  workspace: string,
  signal: AbortSignal | undefined,
): Promise<Answer> {
  let asked: Promise<JudgeScore>
  try {
    asked = judge.score(question, signal ? { workspace, signal } : { workspace })
  } catch (error) {
    return Promise.resolve(judgeFailure(error, signal))
  }
  return asked.then(
    (answer) =>
      typeof answer?.score === 'number' &&
      answer.score >= 0 &&
      answer.score <= 1 &&
      typeof answer.reason === 'string'
        ? answer
        : { error: 'judge answered something that is not a score' },
    (error: unknown) => judgeFailure(error, signal),
  )
}

/** The second stage's score of a text the linear model was unsure of, or of a document. */
function askSecond(
  second: SecondStage | null,
  question: Extract<ExternalQuestion, { scorer: 'second' }>,
): Promise<Answer> {
  if (second === null) return Promise.resolve({ error: 'no second stage' })
  const name = question.task === 'prompt_injection' ? 'injection' : question.task
  const label = question.document ? `${name} (read as a document)` : name
  return second.score(question.task, question.text).then(
    (p) => {
      const score = Math.round(p * 1000) / 1000
      const linear = Math.round(question.linear * 1000) / 1000
      const reason = `${label} ${score} (second stage; linear model ${linear})`
      if (score <= question.threshold) return { score, reason }
      return { score, reason: `${reason}${question.weighed}`, findings: question.findings }
    },
    () => ({ error: 'second stage failed' }),
  )
}

function judgeFailure(error: unknown, signal: AbortSignal | undefined): { error: string } {
  if (error instanceof JudgeError) return { error: error.message }
  // Other errors come from code that does not promise a message fit for clients: say no more.
  return { error: signal?.aborted ? 'judge call aborted' : 'judge call failed' }
}

/** The rule's score of a guard's verdict, as the rule's type reads it (`guardScore`). */
function guardScore(verdict: GuardVerdict, request: GuardRequest): number {
  const read = RULE_TYPE_MODULES[request.ruleType].guardScore
  return read ? read(verdict, request) : verdict.score
}

/** The rule's reason of a guard's answer: what it decided, in one line. */
function guardReason(detector: string, verdict: GuardVerdict): string {
  const said = verdict.rawVerdict.replace(/\s+/g, ' ').trim()
  return `guard ${detector} answered "${said.length > 120 ? `${said.slice(0, 120)}…` : said}"`
}

function askGuard(
  guards: GuardScorer | null,
  question: GuardQuestion,
  workspace: string,
  signal: AbortSignal | undefined,
): Promise<Answer> {
  if (guards === null) return Promise.resolve({ error: `guard ${question.detector} is not configured` })
  let asked: Promise<GuardReply>
  try {
    asked = guards.ask(question, workspace, signal)
  } catch {
    return Promise.resolve({ error: `guard ${question.detector} call failed` })
  }
  return asked.then(
    (reply) => {
      if ('error' in reply) return { error: reply.error }
      const { verdict } = reply
      const score = guardScore(verdict, question.request)
      if (!(score >= 0 && score <= 1))
        return { error: `guard ${question.detector} answered something that is not a score` }
      return {
        score,
        reason: guardReason(question.detector, verdict),
        guard: {
          verdict: verdict.rawVerdict,
          flagged: verdict.flagged,
          categories: verdict.categories,
          unmapped: verdict.unmapped,
          score: verdict.score,
        },
      }
    },
    () => ({ error: `guard ${question.detector} call failed` }),
  )
}

/**
 * One evaluation under way: the conversation read once, and what its policies' rules add up as
 * they are evaluated (the external scorers' questions and the rules waiting for them, the
 * findings to redact).
 */
interface Run {
  /** The conversation as sent (masking counts in it). */
  input: ConversationInput
  conversation: Conversation
  /** The external scorers rules may ask. */
  scorers: Scorers
  timing: Timing | null
  /** Rules waiting for an external scorer, and every question of the evaluation, asked together. */
  awaiting: Awaiting[]
  questions: ExternalQuestion[]
  /** Every finding of a pii, keywords or regex rule, for `redacted` (none capped). */
  redactable: Finding[]
  /** Every finding of an enforced mask rule (none capped), for `masking`. */
  maskable: MaskFinding[]
  traceRule?: RuleTracer
}

/**
 * Evaluates one policy's rules, each by its type's module: a rule decided now is in the result;
 * a rule that asks an external scorer is listed in `awaiting`, its questions appended to
 * `questions`, and its result completed once they are answered.
 */
function evaluatePolicy(compiled: CompiledPolicy, run: Run): PolicyResult {
  const { conversation, awaiting, questions, timing, redactable, scorers } = run
  const { policy } = compiled
  const rules: RuleResult[] = []
  const texts = conversation.textsFor(compiled.targets)
  for (const rule of compiled.rules) {
    const started = timing ? timing.clock() : 0
    const read = rule.neutral === null ? texts : neutralTexts(texts, rule.neutral)
    const input = { texts: read, conversation, targets: policy.target, threshold: rule.threshold, scorers }
    let answer = run.traceRule
      ? run.traceRule(policy.id, rule.index, rule.type, () => rule.compiled.evaluate(input))
      : rule.compiled.evaluate(input)
    if (!('ask' in answer)) {
      if (rule.allowedFindings !== null) answer = withoutAllowed(answer, rule.allowedFindings)
      if (rule.masks && answer.status === 'fail' && answer.findings.length > 0) {
        answer = { ...answer, status: 'masked' }
        if (policy.mode === 'enforce')
          for (const finding of answer.findings) run.maskable.push({ finding, restore: rule.restore })
      }
      if (rule.redacts) for (const finding of answer.findings) redactable.push(finding)
      rules.push(result(rule, answer))
      // A rule waiting for a scorer is timed when its answers arrive.
      if (timing) timing.observe(rule.type, answer.method, (timing.clock() - started) / 1000)
    } else if (answer.ask.some((q) => q.scorer === 'judge') && !scorers.judge) {
      rules.push(
        result(rule, { status: 'error', score: null, method: answer.method, reason: NO_JUDGE, findings: [] }),
      )
      if (timing) timing.observe(rule.type, answer.method, (timing.clock() - started) / 1000)
    } else {
      const r = result(rule, {
        status: 'error',
        score: null,
        method: answer.method,
        reason: null,
        findings: [],
        ...(answer.detector !== undefined ? { detector: answer.detector } : {}),
        ...(answer.cascade !== undefined ? { cascade: answer.cascade } : {}),
      })
      const item: Awaiting = { result: r, rule, first: questions.length, count: answer.ask.length }
      if (answer.known) item.known = answer.known
      awaiting.push(item)
      for (const question of answer.ask) questions.push(question)
      rules.push(r)
    }
  }
  return {
    id: policy.id,
    revision: policy.revision,
    mode: policy.mode,
    on_error: policy.on_error,
    draft: policy.draft,
    verdict: 'pass',
    rules,
  }
}

/** Texts with each occurrence of a rule's `allowed` items read as neutral text (the same texts when none occurs). */
function neutralTexts(
  texts: readonly TargetText[],
  neutral: (text: string) => string,
): readonly TargetText[] {
  let changed = false
  const read = texts.map((t) => {
    const text = neutral(t.text)
    if (text === t.text) return t
    changed = true
    return { ...t, text }
  })
  return changed ? read : texts
}

/**
 * A detector's verdict without the findings whose text is one of the rule's `allowed` items
 * (folded): a rule that found only those passes.
 */
function withoutAllowed(verdict: RuleVerdict, allowed: ReadonlySet<string>): RuleVerdict {
  if (verdict.findings.length === 0) return verdict
  const findings = verdict.findings.filter((f) => f.text === null || !allowed.has(foldAllowed(f.text)))
  if (findings.length === verdict.findings.length) return verdict
  return {
    ...verdict,
    findings,
    status: verdict.status === 'fail' && findings.length === 0 ? 'pass' : verdict.status,
  }
}

/** How a policy's verdict counts for a decision: an `error` as `fail` under fail_closed, as `pass` under fail_open. */
export function countedVerdict(result: PolicyResult): Verdict {
  if (result.verdict === 'error') return result.on_error === 'fail_open' ? 'pass' : 'fail'
  return result.verdict
}

/** Cuts the findings reported across an answer to MAX_ANSWER_FINDINGS, in policy and rule order. */
function capAnswer(results: PolicyResult[]): void {
  let left = MAX_ANSWER_FINDINGS
  for (const policy of results)
    for (const rule of policy.rules) {
      if (rule.findings.length <= left) {
        left -= rule.findings.length
        continue
      }
      const note = `${rule.findings.length - left} of these cut: an answer reports at most ${MAX_ANSWER_FINDINGS} findings`
      rule.reason = rule.reason === null ? note : `${rule.reason}; ${note}`
      rule.findings = rule.findings.slice(0, left)
      left = 0
    }
}

/** Sets each policy's verdict from its rules, and the evaluation's verdict and action from the policies. */
function decide(
  compiled: readonly CompiledPolicy[],
  results: PolicyResult[],
  run: Pick<Run, 'input' | 'redactable' | 'maskable'>,
): EvaluationOutcome {
  capAnswer(results)
  let verdict: Verdict = 'pass'
  let overrideResponse: string | null = null
  for (let i = 0; i < results.length; i++) {
    const result = results[i] as PolicyResult
    let unsatisfied = false
    let errored = false
    for (const rule of result.rules) {
      // An error is neither satisfied nor unsatisfied: it makes the verdict `error`, not `fail`.
      if (rule.status === 'error') errored = true
      else if (!rule.satisfied) unsatisfied = true
    }
    result.verdict = unsatisfied ? 'fail' : errored ? 'error' : 'pass'
    if (result.mode !== 'enforce') continue
    if (countedVerdict(result) === 'fail') {
      verdict = 'fail'
      overrideResponse ??= (compiled[i] as CompiledPolicy).policy.override_response
    }
  }
  // Masking only lets a conversation go on: a failing one is overridden or blocked anyway.
  const masking = verdict === 'pass' && run.maskable.length > 0 ? planMasking(run.input, run.maskable) : null
  return {
    verdict,
    action:
      verdict !== 'pass' ? (overrideResponse === null ? 'block' : 'override') : masking ? 'mask' : 'allow',
    override_response: overrideResponse,
    policies: results,
    masking,
    redactable: run.redactable,
  }
}

/**
 * Evaluates `conversation` against `policies`, in order (docs/evaluation.md). Deterministic rules run at
 * once; every judge and guard call of the evaluation is then made concurrently. Never rejects: a rule that
 * cannot be evaluated is an `error` in the answer.
 */
export function evaluate(
  policies: readonly CompiledPolicy[],
  conversation: ConversationInput,
  options: EvaluateOptions & { judge: null },
): Promise<EvaluationOutcome>
export function evaluate(
  policies: readonly CompiledPolicy[],
  conversation: ConversationInput,
  options: EvaluateOptions & { workspace: string },
): Promise<EvaluationOutcome>
export function evaluate(
  policies: readonly CompiledPolicy[],
  conversation: ConversationInput,
  options: EvaluateOptions,
): Promise<EvaluationOutcome> {
  const read = readConversation(conversation)
  const awaiting: Awaiting[] = []
  const questions: ExternalQuestion[] = []
  const timing = options.observeRule
    ? { observe: options.observeRule, clock: options.clock ?? (() => performance.now()) }
    : null
  const started = timing ? timing.clock() : 0
  const redactable: Finding[] = []
  const maskable: MaskFinding[] = []
  const guards = options.guards ?? null
  const remote = options.remote
  const scorers: Scorers = remote
    ? { judge: remote.judge, guards: remote.guards }
    : {
        judge: options.judge !== null,
        guards:
          guards !== null && options.workspace !== undefined
            ? guards.available(options.workspace)
            : NO_GUARDS,
      }
  const second = options.second ?? null
  if (second !== null) scorers.second = second.bands
  const run: Run = {
    input: conversation,
    conversation: read,
    scorers,
    timing,
    awaiting,
    questions,
    redactable,
    maskable,
  }
  if (options.traceRule) run.traceRule = options.traceRule
  const results = policies.map((p) => evaluatePolicy(p, run))
  if (questions.length === 0) return Promise.resolve(decide(policies, results, run))
  let asked: Promise<Answer>[]
  if (remote) asked = questions.map((q) => (q.scorer === 'second' ? askSecond(second, q) : remote.ask(q)))
  else {
    const signal = typeof options.signal === 'function' ? options.signal() : options.signal
    const workspace = options.workspace as string
    const local = { judge: options.judge, guards }
    asked = questions.map((q) =>
      q.scorer === 'second' ? askSecond(second, q) : askScorer(q, local, workspace, signal),
    )
  }
  return Promise.all(asked).then((answers) => {
    for (const item of awaiting) settle(item, answers)
    if (timing) {
      const seconds = (timing.clock() - started) / 1000
      for (const item of awaiting) timing.observe(item.rule.type, item.result.method, seconds)
    }
    return decide(policies, results, run)
  })
}

/** What `redacted` holds (docs/evaluation.md). */
export interface RedactedConversation {
  messages: { role: ConversationInput['messages'][number]['role']; content: string }[]
  context: string[]
}

/**
 * The conversation with every finding of a pii, keywords or regex rule of any evaluated policy
 * replaced by `[KIND]`, overlapping findings merged: those past a rule's reporting cap too.
 * `label` names another replacement for some (the log writes a masked value's placeholder).
 */
export function redactConversation(
  conversation: ConversationInput,
  outcome: EvaluationOutcome,
  label?: (finding: Finding) => string,
): RedactedConversation {
  // Findings by text: messages at their index, context documents at -1 - index.
  const byText = new Map<number, Finding[]>()
  for (const finding of outcome.redactable) {
    const key = finding.source === 'messages' ? finding.index : -1 - finding.index
    const list = byText.get(key)
    if (list) list.push(finding)
    else byText.set(key, [finding])
  }
  const redact = (text: string, key: number) => {
    const findings = byText.get(key)
    return findings ? redactText(text, findings, label) : text
  }
  return {
    messages: conversation.messages.map((m, i) => ({
      role: m.role,
      content: redact(messageText(m.content), i),
    })),
    context: (conversation.context ?? []).map((text, i) => redact(text, -1 - i)),
  }
}

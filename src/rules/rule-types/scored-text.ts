import type { GuardMessage, GuardRequest } from '../../guards/verdict.js'
import type { JudgeQuestion } from '../../judge/judge.js'
import { type Band, insideBand } from '../band.js'
import type { Conversation } from '../conversation.js'
import type { ModelScorer } from '../detectors/classifier/scorers.js'
import type { TextScore } from '../detectors/index.js'
import type { Finding, RuleMethod, TargetText } from '../types.js'
import {
  absent,
  type CompiledRuleType,
  DEFAULT_THRESHOLD,
  type ExternalQuestion,
  type RuleAnswer,
  type RuleInput,
  type RuleVerdict,
  type Scorers,
  scoredStatus,
  skipped,
} from './rule-type.js'

/**
 * A rule's `detector`: `model`, `judge`, the name of a guard detector the operator configured,
 * or null (unset): the judge when one is configured, else the offline model (docs/evaluation.md,
 * "Which detector scores a rule").
 */
export type DetectorChoice = string | null | undefined

/** The built-in detector names; any other `detector` names a guard. */
export const BUILT_IN_DETECTORS: readonly string[] = ['model', 'judge']

/** The guard a rule's `detector` names, or null when it names a built-in one or none. */
export function guardName(detector: DetectorChoice): string | null {
  return detector === undefined || detector === null || BUILT_IN_DETECTORS.includes(detector)
    ? null
    : detector
}

/** Whether the judge scores a rule that may name its detector (toxicity, prompt_injection). */
export function judgeScores(detector: DetectorChoice, judge: boolean): boolean {
  return detector === 'judge' || ((detector ?? null) === null && judge)
}

/** The reason of a rule whose guard the workspace cannot use (removed from the configuration since, or never granted). */
export function guardUnavailable(name: string): string {
  return `guard ${name} is not configured for this workspace`
}

/**
 * The turns a guard reads to judge `text`: a reply with the user prompt before it (guards judge a
 * response against its prompt), anything else as a prompt of its own. System and tool messages
 * and context documents are read as prompts: text the model is given.
 */
export function guardMessages(text: TargetText, conversation: Conversation): GuardMessage[] {
  if (text.role !== 'assistant') return [{ role: 'user', content: text.text }]
  for (let i = text.index - 1; i >= 0; i--) {
    const before = conversation.messages[i]
    if (before?.role === 'user')
      return [
        { role: 'user', content: before.text },
        { role: 'assistant', content: text.text },
      ]
  }
  return [{ role: 'assistant', content: text.text }]
}

/** How a scored-text rule reads text: its own detector choice and band, and the questions per scorer. */
export interface ScoredTextRule {
  detector: DetectorChoice
  /** The rule's own cascade band (a guard's configuration may set one too); null: none. */
  cascade: Band | null
  model: ModelScorer
  /**
   * The task whose second stage, where there is one (`Scorers.second`), decides the texts the
   * linear model is unsure of, and the texts it always reads (`always`: documents and tool
   * results for prompt_injection, where planted instructions hide).
   */
  second?: { task: string; always: (text: TargetText) => boolean }
  question: (text: TargetText) => JudgeQuestion
  guardRequest: (text: TargetText, conversation: Conversation) => GuardRequest
}

/** The band in force for a rule naming `guard`: the rule's own, else its configuration's. */
function bandFor(rule: ScoredTextRule, guard: string, scorers: Scorers): Band | null {
  return rule.cascade ?? scorers.guards.get(guard)?.cascade ?? null
}

/**
 * A rule scored text by text, by the offline model, the judge (`judgeScores`) or a guard
 * detector: each text the policy's targets select is scored with its role (a user or assistant
 * message, a `context` document), and the worst (highest) score decides, its threshold read as a
 * maximum. With a guard and a cascade band, the offline model scores every text first and only
 * the texts whose score is inside the band are asked of the guard. Scored on windows of a
 * streamed reply.
 */
export function scoredText(rule: ScoredTextRule): CompiledRuleType {
  const guard = guardName(rule.detector)
  return {
    evaluate(input: RuleInput): RuleAnswer {
      if (guard !== null) return guardAnswer(rule, guard, input)
      const useJudge = judgeScores(rule.detector, input.scorers.judge)
      const method: RuleMethod = useJudge ? 'judge' : 'model'
      if (input.texts.length === 0) return skipped(method, absent(input.targets))
      if (useJudge)
        return {
          ask: input.texts.map((text) => ({ scorer: 'judge', question: rule.question(text) })),
          method,
        }
      const threshold = input.threshold ?? DEFAULT_THRESHOLD
      const band = rule.second ? input.scorers.second?.get(rule.second.task) : undefined
      if (rule.second && band) return secondAnswer(rule.model, rule.second, band, input.texts, threshold)
      return modelVerdict(rule.model, input.texts, threshold)
    },
    stream: { hold: 'window' },
  }
}

/** The offline model's verdict over `texts`: the worst score, its reason, every finding. */
function modelVerdict(model: ModelScorer, texts: readonly TargetText[], threshold: number): RuleVerdict {
  return verdictOf(
    texts.map((text) => model(text, threshold)),
    threshold,
  )
}

/**
 * The offline model's cascade: the linear model scores every text and decides those outside
 * `band`; the second stage decides the others, and every text `always` names that the linear
 * model is not sure is an attack (a document it scores under the band is read by the second
 * stage too, which may flag what the linear model cleared). Its scores count with the sure
 * texts' (`known`), the worst deciding.
 */
function secondAnswer(
  model: ModelScorer,
  second: NonNullable<ScoredTextRule['second']>,
  band: Band,
  texts: readonly TargetText[],
  threshold: number,
): RuleAnswer {
  const ask: ExternalQuestion[] = []
  const sure: TextScore[] = []
  for (const text of texts) {
    const scored = model(text, threshold)
    const document = second.always(text)
    if ((document || scored.score >= band.low) && scored.score <= band.high) {
      // The phrases that weighed most for the linear model explain a text the second stage flags.
      const explained = scored.score > threshold ? scored : model(text, -1)
      const semicolon = explained.reason?.indexOf(';') ?? -1
      ask.push({
        scorer: 'second',
        task: second.task,
        text: text.text,
        linear: scored.score,
        threshold,
        findings: explained.findings,
        weighed: semicolon >= 0 ? (explained.reason as string).slice(semicolon) : '',
        document,
      })
    } else sure.push(scored)
  }
  if (ask.length === 0) return verdictOf(sure, threshold)
  if (sure.length === 0) return { ask, method: 'model' }
  const verdict = verdictOf(sure, threshold)
  return {
    ask,
    method: 'model',
    known: { score: verdict.score as number, reason: verdict.reason, findings: verdict.findings },
  }
}

/** The verdict of texts the offline model scored: the worst score decides. */
function verdictOf(scores: readonly TextScore[], threshold: number): RuleVerdict {
  let worst: TextScore | null = null
  const findings: Finding[] = []
  for (const scored of scores) {
    if (worst === null || scored.score > worst.score) worst = scored
    for (const finding of scored.findings) findings.push(finding)
  }
  const { score, reason } = worst as TextScore
  return {
    status: scoredStatus('lower-is-better', score, threshold),
    score,
    method: 'model',
    reason: reason ?? null,
    findings,
  }
}

/** A rule naming a guard: its questions, or, under a cascade, the model's verdict where it is sure. */
function guardAnswer(rule: ScoredTextRule, guard: string, input: RuleInput): RuleAnswer {
  if (input.texts.length === 0) return { ...skipped('guard', absent(input.targets)), detector: guard }
  if (!input.scorers.guards.has(guard))
    return {
      status: 'error',
      score: null,
      method: 'guard',
      reason: guardUnavailable(guard),
      findings: [],
      detector: guard,
    }
  const band = bandFor(rule, guard, input.scorers)
  const ask = (text: TargetText, escalated: boolean): ExternalQuestion => ({
    scorer: 'guard',
    detector: guard,
    request: rule.guardRequest(text, input.conversation),
    escalated,
  })
  if (band === null)
    return { ask: input.texts.map((text) => ask(text, false)), method: 'guard', detector: guard }
  const threshold = input.threshold ?? DEFAULT_THRESHOLD
  const unsure: TargetText[] = []
  const sure: TextScore[] = []
  const all: TextScore[] = []
  for (const text of input.texts) {
    const scored = rule.model(text, threshold)
    all.push(scored)
    if (insideBand(scored.score, band)) unsure.push(text)
    else sure.push(scored)
  }
  const decided = verdictOf(all, threshold)
  const cascade = {
    low: band.low,
    high: band.high,
    model_score: decided.score as number,
    escalated: unsure.length,
  }
  // The model is sure of every text: it answers, and the guard is not asked.
  if (unsure.length === 0) return { ...decided, detector: guard, cascade }
  let known: { score: number; reason: string | null; findings: Finding[] } | undefined
  if (sure.length > 0) {
    const verdict = verdictOf(sure, threshold)
    known = { score: verdict.score as number, reason: verdict.reason, findings: verdict.findings }
  }
  return {
    ask: unsure.map((text) => ask(text, true)),
    method: 'guard',
    detector: guard,
    cascade,
    ...(known ? { known } : {}),
  }
}

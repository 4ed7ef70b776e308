import type { JudgeQuestion } from '../../judge/judge.js'
import type { ModelScorer } from '../detectors/classifier/scorers.js'
import type { TextScore } from '../detectors/index.js'
import type { Finding, RuleMethod, TargetText } from '../types.js'
import {
  absent,
  type CompiledRuleType,
  DEFAULT_THRESHOLD,
  type RuleAnswer,
  type RuleInput,
  scoredStatus,
  skipped,
} from './rule-type.js'

/** A rule's `detector`: null (unset) picks the judge when one is configured, else the offline model. */
export type DetectorChoice = 'model' | 'judge' | null | undefined

/** Whether the judge scores a rule that may name its detector (toxicity, prompt_injection). */
export function judgeScores(detector: DetectorChoice, judge: boolean): boolean {
  return detector === 'judge' || ((detector ?? null) === null && judge)
}

/**
 * A rule scored text by text, by the offline model or the judge (`judgeScores`): each text the
 * policy's targets select is scored with its role (a user or assistant message, a `context`
 * document), and the worst (highest) score decides, its threshold read as a maximum. Scored on
 * windows of a streamed reply.
 */
export function scoredText(
  detector: DetectorChoice,
  model: ModelScorer,
  question: (text: TargetText) => JudgeQuestion,
): CompiledRuleType {
  return {
    evaluate(input: RuleInput): RuleAnswer {
      const useJudge = judgeScores(detector, input.scorers.judge)
      const method: RuleMethod = useJudge ? 'judge' : 'model'
      if (input.texts.length === 0) return skipped(method, absent(input.targets))
      if (useJudge)
        return { ask: input.texts.map((text) => ({ scorer: 'judge', question: question(text) })), method }
      const threshold = input.threshold ?? DEFAULT_THRESHOLD
      let worst: TextScore | null = null
      const findings: Finding[] = []
      for (const text of input.texts) {
        const scored = model(text, threshold)
        if (worst === null || scored.score > worst.score) worst = scored
        for (const finding of scored.findings) findings.push(finding)
      }
      const { score, reason } = worst as TextScore
      return {
        status: scoredStatus('lower-is-better', score, threshold),
        score,
        method,
        reason: reason ?? null,
        findings,
      }
    },
    stream: { hold: 'window' },
  }
}

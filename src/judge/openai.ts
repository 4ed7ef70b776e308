import { randomBytes } from 'node:crypto'
import { postJson, readBody } from '../net/outbound.js'
import type { RuleType } from '../schemas/policies.js'
import { createCachedCalls, inTurn, questionKey } from '../scoring/calls.js'
import { modelCallSpan, recordOutput, recordUsage } from '../telemetry/index.js'
import { WorkspaceSlots } from '../workspace-slots.js'
import { type Judge, JudgeError, type JudgeQuestion, type JudgeScore } from './judge.js'
import { judgePrompt, parseJudgeAnswer, questionText } from './prompts.js'

export interface OpenAiJudgeOptions {
  /** e.g. `http://127.0.0.1:11434/v1`; `/chat/completions` is appended. */
  baseUrl: string
  model: string
  /** Sent as `Authorization: Bearer`; never logged, never part of an error. */
  apiKey: string | null
  /** Per question, from the moment it is asked: waiting for a free slot counts. */
  timeoutMs: number
  /**
   * Calls in flight at once for this judge; more wait their turn, workspaces in turn, and one
   * workspace holds at most half of them (at least one).
   */
  maxConcurrency: number
  /** Clock of the answer cache and of `onCall`'s durations, in milliseconds (default `performance.now`). */
  now?: () => number
  /** Answers kept (default 10,000). */
  cacheSize?: number
  /** Told of every question: answered from the cache, or the outcome and duration of the call made (for metrics). */
  onCall?: (call: JudgeCall) => void
}

/** One question as `onCall` reports it; `ms` counts from asking it (0 for a cache hit). */
export interface JudgeCall {
  type: RuleType
  outcome: 'answered' | 'cached' | 'timeout' | 'failed'
  ms: number
}

/** The most of a judge's answer read: a score and a reason are a few hundred bytes. */
const MAX_ANSWER_BYTES = 1024 * 1024

function aborted(): JudgeError {
  return new JudgeError('judge call aborted')
}

/**
 * The usage and model of a judge's answer on its span (traced only), and its reply with content
 * capture on; an answer that is not JSON sets none.
 */
function recordAnswerUsage(span: Parameters<typeof recordUsage>[0], text: string): void {
  try {
    const answer = JSON.parse(text) as { usage?: Record<string, unknown>; model?: unknown }
    recordUsage(span, answer.usage, answer.model)
    recordOutput(span, [answer])
  } catch {
    // Not JSON: parseJudgeAnswer says so to the rule.
  }
}

/** A Judge over any OpenAI-compatible Chat Completions endpoint (docs/evaluation.md, `method`: what produced a verdict). */
export function createOpenAiJudge(options: OpenAiJudgeOptions): Judge {
  const { model, apiKey, timeoutMs } = options
  const url = new URL(`${options.baseUrl.replace(/\/+$/, '')}/chat/completions`)
  const maxConcurrency = Math.max(1, Math.floor(options.maxConcurrency))
  const slots = new WorkspaceSlots(maxConcurrency, Math.max(1, Math.floor(maxConcurrency / 2)))
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (apiKey) headers.authorization = `Bearer ${apiKey}`
  const now = options.now
  const clock = now ?? (() => performance.now())
  const onCall = options.onCall
  const calls = createCachedCalls<JudgeScore>({
    size: options.cacheSize,
    now,
    copy: (score) => ({ ...score }),
    aborted,
  })

  async function call(question: JudgeQuestion, workspace: string, signal: AbortSignal): Promise<JudgeScore> {
    const started = onCall ? clock() : 0
    const report = (outcome: JudgeCall['outcome']) =>
      onCall?.({ type: question.type, outcome, ms: clock() - started })
    const failures = {
      timedOut() {
        report('timeout')
        return new JudgeError(`judge did not answer within ${timeoutMs} ms`)
      },
      aborted() {
        report('failed')
        return aborted()
      },
    }
    return inTurn(slots, workspace, timeoutMs, signal, failures, async (heeded, timeout) => {
      const prompt = judgePrompt(question, randomBytes(12).toString('hex'))
      const messages = [
        { role: 'system', content: prompt.system },
        { role: 'user', content: prompt.user },
      ]
      const body = JSON.stringify({
        model,
        temperature: 0,
        response_format: { type: 'json_object' },
        messages,
      })
      let status: number
      let text: string
      try {
        ;({ status, text } = await modelCallSpan(
          { operation: 'chat', provider: 'openai', model, input: messages },
          async (span) => {
            const response = await postJson(url, headers, body, heeded)
            const answered = {
              status: response.statusCode ?? 0,
              text: await readBody(response, MAX_ANSWER_BYTES),
            }
            if (span) recordAnswerUsage(span, answered.text)
            return answered
          },
        ))
      } catch (error) {
        if (timeout.aborted) throw failures.timedOut()
        if (signal.aborted) throw failures.aborted()
        report('failed')
        throw new JudgeError(`could not reach the judge${networkCode(error)}`)
      }
      try {
        // The body of an error answer is left out: providers echo part of a rejected key in it.
        if (status < 200 || status > 299) throw new JudgeError(`judge answered HTTP ${status}`)
        const score = parseJudgeAnswer(completionContent(text))
        report('answered')
        return score
      } catch (error) {
        report('failed')
        throw error
      }
    })
  }

  return {
    model,
    score(question, { workspace, signal }) {
      if (signal?.aborted) return Promise.reject(aborted())
      const key = questionKey(workspace, model, questionText(question))
      const asked = calls.ask(key, (abandoned) => call(question, workspace, abandoned), signal)
      if (!asked.cached) return asked.answer
      onCall?.({ type: question.type, outcome: 'cached', ms: 0 })
      return Promise.resolve(asked.answer)
    },
  }
}

/** `choices[0].message.content` of a Chat Completions answer, or a JudgeError. */
function completionContent(text: string): string {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new JudgeError('judge answered something that is not a chat completion')
  }
  const content = (body as { choices?: { message?: { content?: unknown } }[] } | null)?.choices?.[0]?.message
    ?.content
  if (typeof content !== 'string')
    throw new JudgeError('judge answered something that is not a chat completion')
  return content
}

/** The system error code behind a failed call (`ECONNREFUSED`), never its message or URL. */
function networkCode(error: unknown): string {
  const code =
    (error as { code?: unknown } | null)?.code ??
    (error as { cause?: { code?: unknown } } | null)?.cause?.code
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code) ? ` (${code})` : ''
}

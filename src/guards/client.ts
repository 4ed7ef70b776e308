/**
 * A client of one configured guard detector, a Scorer (scoring/scorer.ts): asks its format's
 * questions over HTTP and reads the answers into a GuardVerdict. Every failure (timeout, an HTTP
 * error status, an answer that is not the documented shape, a refusal, a network error, the
 * caller giving up) rejects with a GuardError the rule shows as its `error`, so that `on_error`
 * decides. Answers are cached and coalesced per workspace (scoring/calls.ts), and calls take
 * turns per workspace, as the judge's do.
 */
import { postJson, readBody } from '../net/outbound.js'
import type { RuleType } from '../schemas/policies.js'
import { createCachedCalls, inTurn, questionKey } from '../scoring/calls.js'
import { type Scorer, ScorerError } from '../scoring/scorer.js'
import { WorkspaceSlots } from '../workspace-slots.js'
import { formatOptions, type GuardConfig } from './config.js'
import { FORMATS, type GuardCall, type GuardFormatName } from './formats/index.js'
import { GuardAnswerError, type GuardRequest, type GuardVerdict } from './verdict.js'

/** Why a guard could not answer. `aborted`: the caller's signal fired (it went away, or the process is stopping). */
export type GuardErrorKind = 'timeout' | 'http' | 'garbage' | 'refused' | 'network' | 'aborted'

/** Why a guard could not answer; the message is one short line for the rule's reason, never the API key, a URL or the server's error text. */
export class GuardError extends ScorerError {
  override name = 'GuardError'
  constructor(
    override readonly kind: GuardErrorKind,
    message: string,
  ) {
    super(message, kind)
  }
}

/** One question as `onCall` reports it (for metrics); `ms` counts from asking it (0 for a cache hit). */
export interface GuardCallReport {
  detector: string
  format: GuardFormatName
  ruleType: RuleType
  outcome: 'answered' | 'cached' | GuardErrorKind
  ms: number
}

export interface GuardClientOptions {
  onCall?: (call: GuardCallReport) => void
  /** Clock of the cache and of durations, in milliseconds (default `performance.now`). */
  now?: () => number
  /** Answers kept (default 10,000). */
  cacheSize?: number
}

/** A guard detector: answers a GuardRequest with its verdict, or rejects with a GuardError. */
export interface GuardClient extends Scorer<GuardRequest, GuardVerdict> {
  readonly config: GuardConfig
}
/** The most of an answer read: a verdict is a few hundred bytes, a moderation result a few KiB. */
const MAX_ANSWER_BYTES = 1024 * 1024

const fail = (kind: GuardErrorKind, detail: string) => new GuardError(kind, detail)

/** Creates the client of one guard detector. */
export function createGuardClient(config: GuardConfig, options: GuardClientOptions = {}): GuardClient {
  const format = FORMATS[config.format]
  const formatOpts = formatOptions(config)
  const clock = options.now ?? (() => performance.now())
  const onCall = options.onCall
  const slots = new WorkspaceSlots(config.maxConcurrency, Math.max(1, Math.floor(config.maxConcurrency / 2)))
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`
  const aborted = () => fail('aborted', `guard ${config.name} call aborted`)
  const calls = createCachedCalls<GuardVerdict>({ size: options.cacheSize, now: options.now, copy, aborted })

  async function post(call: GuardCall, signal: AbortSignal, deadline: AbortSignal, caller?: AbortSignal) {
    let status: number
    let text: string
    try {
      const response = await postJson(
        new URL(`${config.baseUrl}${call.path}`),
        headers,
        JSON.stringify(call.body),
        signal,
      )
      status = response.statusCode ?? 0
      text = await readBody(response, MAX_ANSWER_BYTES)
    } catch (error) {
      if (deadline.aborted)
        throw fail('timeout', `guard ${config.name} did not answer within ${config.timeoutMs} ms`)
      if (caller?.aborted) throw fail('aborted', `guard ${config.name} call aborted`)
      if (error instanceof RangeError)
        throw fail('garbage', `guard ${config.name} answered more than ${MAX_ANSWER_BYTES} bytes`)
      throw fail('network', `could not reach guard ${config.name}${networkCode(error)}`)
    }
    // The body of an error answer is left out of the detail: servers echo part of a rejected key.
    if (status < 200 || status > 299) {
      if (/"code"\s*:\s*"content_filter"/.test(text))
        throw fail('refused', `guard ${config.name}'s server refused the text (content filter)`)
      throw fail('http', `guard ${config.name} answered HTTP ${status}`)
    }
    try {
      return JSON.parse(text) as unknown
    } catch {
      throw fail('garbage', `guard ${config.name} answered something that is not JSON`)
    }
  }

  async function ask(
    request: GuardRequest,
    workspace: string,
    asked: GuardCall[],
    caller: AbortSignal,
  ): Promise<GuardVerdict> {
    const failures = {
      timedOut: () => fail('timeout', `guard ${config.name} did not answer within ${config.timeoutMs} ms`),
      aborted,
    }
    return inTurn(slots, workspace, config.timeoutMs, caller, failures, async (heeded, deadline) => {
      // Ends the sibling calls of a question once one of them failed.
      const siblings = new AbortController()
      const signal = AbortSignal.any([heeded, siblings.signal])
      const answers = await Promise.all(
        asked.map((call) =>
          post(call, signal, deadline, caller).catch((error: unknown) => {
            siblings.abort()
            throw error
          }),
        ),
      )
      let verdict: GuardVerdict
      try {
        verdict = format.read(answers, request, formatOpts)
      } catch (error) {
        if (error instanceof GuardAnswerError)
          throw fail(
            error.kind,
            error.message.replace(/^guard(?:'s)? /, (m) => m.replace('guard', `guard ${config.name}`)),
          )
        throw fail('garbage', `guard ${config.name} answered something that could not be read`)
      }
      if (!(verdict.score >= 0 && verdict.score <= 1))
        throw fail('garbage', `guard ${config.name} answered a score outside 0..1`)
      return verdict
    })
  }

  return {
    config,
    async score(request, { workspace, signal }) {
      const started = clock()
      const report = (outcome: GuardCallReport['outcome'], ms: number) =>
        onCall?.({ detector: config.name, format: config.format, ruleType: request.ruleType, outcome, ms })
      if (signal?.aborted) {
        report('aborted', 0)
        throw aborted()
      }
      let asked: GuardCall[]
      try {
        asked = format.calls(request, formatOpts)
      } catch {
        report('garbage', 0)
        throw fail('garbage', `guard ${config.name} could not be asked that`)
      }
      const key = questionKey(workspace, config.name, config.format, request.asks, JSON.stringify(asked))
      const answer = calls.ask(key, (abandoned) => ask(request, workspace, asked, abandoned), signal)
      if (answer.cached) {
        report('cached', 0)
        return answer.answer
      }
      try {
        const verdict = await answer.answer
        if (!answer.shared) report('answered', clock() - started)
        return verdict
      } catch (error) {
        const failure =
          error instanceof GuardError ? error : fail('network', `could not reach guard ${config.name}`)
        if (!answer.shared || failure.kind === 'aborted') report(failure.kind, clock() - started)
        throw failure
      }
    },
  }
}

/** A copy, so a caller that changes its verdict cannot change the cached one. */
function copy(verdict: GuardVerdict): GuardVerdict {
  return {
    ...verdict,
    categories: [...verdict.categories],
    unmapped: [...verdict.unmapped],
    categoryScores: { ...verdict.categoryScores },
  }
}

/** The system error code behind a failed call (`ECONNREFUSED`), never its message or URL. */
function networkCode(error: unknown): string {
  const code =
    (error as { code?: unknown } | null)?.code ??
    (error as { cause?: { code?: unknown } } | null)?.cause?.code
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code) ? ` (${code})` : ''
}

/**
 * A client of one configured guard detector: asks its format's questions over HTTP and reads the
 * answers into a GuardVerdict. `check` never rejects: every failure (timeout, an HTTP error
 * status, an answer that is not the documented shape, a refusal, a network error, the caller
 * giving up) is an outcome the rule shows as its `error`, so that `on_error` decides. Answers are
 * cached per workspace, and calls take turns per workspace, as the judge's do.
 */
import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { postJson, readBody } from '../net/outbound.js'
import { WorkspaceSlots } from '../workspace-slots.js'
import { formatOptions, type GuardConfig } from './config.js'
import { FORMATS, type GuardCall, type GuardFormatName } from './formats/index.js'
import {
  GuardAnswerError,
  type GuardRequest,
  type GuardRuleType,
  type GuardVerdict,
  type ToxicityCategory,
} from './verdict.js'

/** Why a guard could not answer. `aborted`: the caller's signal fired (it went away, or the process is stopping). */
export type GuardErrorKind = 'timeout' | 'http' | 'garbage' | 'refused' | 'network' | 'aborted'

export interface GuardError {
  kind: GuardErrorKind
  /** One short line for the rule's reason: never the API key, a URL or the server's error text. */
  detail: string
}

export type GuardOutcome =
  | { ok: true; verdict: GuardVerdict; ms: number; cached: boolean }
  | { ok: false; error: GuardError; ms: number }

/** A question and the workspace whose evaluation asks it. */
export interface GuardCheck extends GuardRequest {
  workspace: string
}

/** One question as `onCall` reports it (for metrics); `ms` counts from asking it (0 for a cache hit). */
export interface GuardCallReport {
  detector: string
  format: GuardFormatName
  ruleType: GuardRuleType
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

export interface GuardClient {
  readonly config: GuardConfig
  /** Why the guard cannot serve this rule type (and toxicity categories), or null: part of validating a rule. */
  cannotServe(ruleType: GuardRuleType, categories?: readonly ToxicityCategory[] | null): string | null
  /** Asks the guard; never rejects. */
  check(request: GuardCheck, signal?: AbortSignal): Promise<GuardOutcome>
}

/** Identical questions within this window are answered from the cache, as the judge's are. */
const CACHE_TTL_MS = 10 * 60_000
/** The most of an answer read: a verdict is a few hundred bytes, a moderation result a few KiB. */
const MAX_ANSWER_BYTES = 1024 * 1024

class Failure extends Error {
  constructor(readonly error: GuardError) {
    super(error.detail)
  }
}

const fail = (kind: GuardErrorKind, detail: string) => new Failure({ kind, detail })

/** A question under way, shared by every caller asking it meanwhile. */
interface Flight {
  promise: Promise<GuardVerdict>
  controller: AbortController
  /** Callers still waiting that could give up; when the last gives up, the call is abandoned. */
  waiters: number
}

/** Creates the client of one guard detector. */
export function createGuardClient(config: GuardConfig, options: GuardClientOptions = {}): GuardClient {
  const format = FORMATS[config.format]
  const formatOpts = formatOptions(config)
  const clock = options.now ?? (() => performance.now())
  const onCall = options.onCall
  const slots = new WorkspaceSlots(config.maxConcurrency, Math.max(1, Math.floor(config.maxConcurrency / 2)))
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`
  const cache = new LRUCache<string, GuardVerdict>({
    max: options.cacheSize ?? 10_000,
    ttl: CACHE_TTL_MS,
    ttlResolution: 0,
    ...(options.now ? { perf: { now: options.now } } : {}),
  })
  const flights = new Map<string, Flight>()

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

  async function ask(request: GuardCheck, calls: GuardCall[], caller?: AbortSignal): Promise<GuardVerdict> {
    // One deadline from the moment the question is asked: waiting for a slot counts.
    const deadline = new AbortController()
    const timer = setTimeout(() => deadline.abort(), config.timeoutMs)
    // Ends the sibling calls of a question once one of them failed.
    const siblings = new AbortController()
    const signals = [deadline.signal, siblings.signal]
    if (caller) signals.push(caller)
    const signal = AbortSignal.any(signals)
    try {
      try {
        await slots.acquire(request.workspace, signal)
      } catch {
        if (deadline.signal.aborted)
          throw fail('timeout', `guard ${config.name} did not answer within ${config.timeoutMs} ms`)
        throw fail('aborted', `guard ${config.name} call aborted`)
      }
      try {
        const answers = await Promise.all(
          calls.map((call) =>
            post(call, signal, deadline.signal, caller).catch((error: unknown) => {
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
      } finally {
        slots.release(request.workspace)
      }
    } finally {
      clearTimeout(timer)
    }
  }

  return {
    config,
    cannotServe: (ruleType, categories) => format.cannotServe(ruleType, formatOpts, categories),
    async check(request, signal) {
      const started = clock()
      const report = (outcome: GuardCallReport['outcome'], ms: number) =>
        onCall?.({ detector: config.name, format: config.format, ruleType: request.ruleType, outcome, ms })
      if (signal?.aborted) {
        report('aborted', 0)
        return { ok: false, error: { kind: 'aborted', detail: `guard ${config.name} call aborted` }, ms: 0 }
      }
      let calls: GuardCall[]
      try {
        calls = format.calls(request, formatOpts)
      } catch {
        report('garbage', 0)
        return {
          ok: false,
          error: { kind: 'garbage', detail: `guard ${config.name} could not be asked that` },
          ms: 0,
        }
      }
      // Answers are a workspace's own: a cached answer comes at once, so a shared one would let a
      // tenant confirm what another's texts say by how fast it is answered.
      const key = createHash('sha256')
        .update(request.workspace)
        .update('\0')
        .update(config.name)
        .update('\0')
        .update(config.format)
        .update('\0')
        .update(request.ruleType)
        .update('\0')
        .update(JSON.stringify(calls))
        .digest('base64url')
      const hit = cache.get(key)
      if (hit) {
        report('cached', 0)
        return { ok: true, verdict: copy(hit), ms: 0, cached: true }
      }
      // A question already under way is followed, not asked again; the call is abandoned only
      // when every caller following it has given up.
      let flight = flights.get(key)
      const shared = flight !== undefined
      if (!flight) {
        const controller = new AbortController()
        const promise = ask(request, calls, controller.signal).then((verdict) => {
          cache.set(key, verdict)
          return verdict
        })
        const started: Flight = { promise, controller, waiters: 0 }
        flights.set(key, started)
        // Failures are not cached: the next asker tries again.
        const land = () => flights.get(key) === started && flights.delete(key)
        promise.then(land, land)
        flight = started
      }
      try {
        const verdict = await follow(flight, key, signal)
        const ms = clock() - started
        if (!shared) report('answered', ms)
        return { ok: true, verdict: copy(verdict), ms, cached: false }
      } catch (error) {
        const ms = clock() - started
        const failure =
          error instanceof Failure
            ? error.error
            : { kind: 'network' as const, detail: `could not reach guard ${config.name}` }
        if (!shared || failure.kind === 'aborted') report(failure.kind, ms)
        return { ok: false, error: failure, ms }
      }
    },
  }

  function follow(flight: Flight, key: string, signal: AbortSignal | undefined): Promise<GuardVerdict> {
    // A caller without a signal never gives up, so it holds the call open for good.
    flight.waiters++
    if (!signal) return flight.promise
    return new Promise((resolve, reject) => {
      const leave = () => {
        flight.waiters--
        if (flight.waiters === 0) {
          // Nobody waits for the answer any more: free the slot and let a new asker start afresh.
          if (flights.get(key) === flight) flights.delete(key)
          flight.controller.abort()
        }
        reject(fail('aborted', `guard ${config.name} call aborted`))
      }
      signal.addEventListener('abort', leave, { once: true })
      flight.promise.then(
        (verdict) => {
          signal.removeEventListener('abort', leave)
          resolve(verdict)
        },
        (error: unknown) => {
          signal.removeEventListener('abort', leave)
          reject(error)
        },
      )
    })
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

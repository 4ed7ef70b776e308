/**
 * The calls of an external scorer (scorer.ts), cached and coalesced: an answer is kept for ten
 * minutes under a key of the workspace and the question, a question already under way is
 * followed rather than asked again, and the call is abandoned only when every caller following
 * it has given up.
 */
import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'

/** Identical questions within this window are answered from the cache (docs/evaluation.md, `method`). */
const CACHE_TTL_MS = 10 * 60_000

export interface CachedCallsOptions<Answer extends object> {
  /** Answers kept (default 10,000). */
  size?: number | undefined
  /** Clock of the cache, in milliseconds (default `performance.now`). */
  now?: (() => number) | undefined
  /** A copy of an answer, so that a caller that changes its answer cannot change the cached one. */
  copy: (answer: Answer) => Answer
  /** What a caller that gives up rejects with. */
  aborted: () => Error
}

/** An answer from the cache, or on its way: from a call made now, or one under way (`shared`). */
export type Asked<Answer> =
  | { cached: true; answer: Answer }
  | { cached: false; shared: boolean; answer: Promise<Answer> }

export interface CachedCalls<Answer> {
  /**
   * The answer to the question `key` names (questionKey): cached, the call under way followed, or
   * `call` made now, whose signal fires once every caller following it has given up. A caller
   * without `signal` never gives up. Failures are not cached: the next asker tries again.
   */
  ask(key: string, call: (signal: AbortSignal) => Promise<Answer>, signal?: AbortSignal): Asked<Answer>
}

/**
 * The key of a question asked for `workspace`. Answers, and calls under way, are a workspace's
 * own: a cached answer comes at once, so a shared one would let a tenant confirm what another's
 * texts say by how fast it is answered.
 */
export function questionKey(workspace: string, ...parts: readonly string[]): string {
  const hash = createHash('sha256').update(workspace)
  for (const part of parts) hash.update('\0').update(part)
  return hash.digest('base64url')
}

/** A call under way, shared by every caller asking the same question meanwhile. */
interface Flight<Answer> {
  promise: Promise<Answer>
  controller: AbortController
  /** Callers still waiting that could give up; when the last gives up, the call is abandoned. */
  waiters: number
}

export function createCachedCalls<Answer extends object>(
  options: CachedCallsOptions<Answer>,
): CachedCalls<Answer> {
  const { copy, aborted, now } = options
  const cache = new LRUCache<string, Answer>({
    max: options.size ?? 10_000,
    ttl: CACHE_TTL_MS,
    // Read the clock at every look-up: by default the cache reuses one reading for a millisecond
    // of real time, so an entry could outlive its 10 minutes on a clock that jumps (and a test's
    // clock does).
    ttlResolution: 0,
    ...(now ? { perf: { now } } : {}),
  })
  const flights = new Map<string, Flight<Answer>>()

  function follow(flight: Flight<Answer>, key: string, signal: AbortSignal | undefined): Promise<Answer> {
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
        reject(aborted())
      }
      signal.addEventListener('abort', leave, { once: true })
      flight.promise.then(
        (answer) => {
          signal.removeEventListener('abort', leave)
          resolve(answer)
        },
        (error: unknown) => {
          signal.removeEventListener('abort', leave)
          reject(error)
        },
      )
    })
  }

  return {
    ask(key, call, signal) {
      const hit = cache.get(key)
      if (hit) return { cached: true, answer: copy(hit) }
      let flight = flights.get(key)
      const shared = flight !== undefined
      if (!flight) {
        const controller = new AbortController()
        const promise = call(controller.signal).then((answer) => {
          cache.set(key, answer)
          return answer
        })
        const started: Flight<Answer> = { promise, controller, waiters: 0 }
        flights.set(key, started)
        const land = () => flights.get(key) === started && flights.delete(key)
        promise.then(land, land)
        flight = started
      }
      return { cached: false, shared, answer: follow(flight, key, signal).then(copy) }
    },
  }
}

/** Turns per workspace at calling a scorer (src/workspace-slots.ts). */
export interface Turns {
  acquire(workspace: string, signal: AbortSignal): Promise<void>
  release(workspace: string): void
}

/** What a call that could not start rejects with: its deadline passed, or its caller gave up. */
export interface TurnFailures {
  timedOut(): Error
  aborted(): Error
}

/**
 * Runs `call` in `workspace`'s turn, under one deadline of `timeoutMs` from now: waiting for a
 * turn counts, so a turn held by others' hanging calls cannot keep a rule waiting longer than
 * the scorer's timeout. `call` is handed the signal its I/O heeds (the deadline, or `caller`
 * giving up) and the deadline's own, to tell the two apart.
 */
export async function inTurn<Answer>(
  turns: Turns,
  workspace: string,
  timeoutMs: number,
  caller: AbortSignal,
  failures: TurnFailures,
  call: (signal: AbortSignal, deadline: AbortSignal) => Promise<Answer>,
): Promise<Answer> {
  const deadline = new AbortController()
  const timer = setTimeout(() => deadline.abort(), timeoutMs)
  const signal = AbortSignal.any([caller, deadline.signal])
  try {
    try {
      await turns.acquire(workspace, signal)
    } catch {
      throw deadline.signal.aborted ? failures.timedOut() : failures.aborted()
    }
    try {
      return await call(signal, deadline.signal)
    } finally {
      turns.release(workspace)
    }
  } finally {
    clearTimeout(timer)
  }
}

import { existsSync } from 'node:fs'
import { Worker } from 'node:worker_threads'
import { AppError, type FieldError } from '../errors.js'
import { type Judge, JudgeError, type JudgeQuestion, type JudgeScore } from '../judge/judge.js'
import type { ConversationInput } from '../rules/conversation.js'
import type {
  EvaluablePolicy,
  EvaluationOutcome,
  RedactedConversation,
  RuleObserver,
} from '../rules/evaluate.js'
import type { RuleMethod } from '../rules/types.js'
import type { PolicyCreate, RuleType } from '../schemas/policies.js'
import type { RedactedLog } from './support/redacted-log.js'

/**
 * The evaluation pool (docs/evaluation.md, "Large evaluations"): worker threads that run the
 * evaluations too large to run on the event loop without holding up every other request. A
 * worker compiles the policies it is sent and keeps them by the key the main thread's cache
 * uses (row sequence and revision), so a policy change reaches it exactly as it reaches the
 * main thread: the main thread reads the current revision from the store for every evaluation
 * and sends its key. Judge calls stay on the main thread (its connections, concurrency limit and
 * cache): a worker asks for them with a message, and waits without holding its thread.
 */

/**
 * One stored revision (keyed by row and revision; `test-run:…` for a policy under test, kept
 * only while its run lasts), one draft (key null, compiled for this evaluation only), or a draft
 * body still to be checked like a create, its problems' pointers under `at`.
 */
export type PoolPolicy =
  | { key: string | null; policy: EvaluablePolicy }
  | { unchecked: PolicyCreate; at: string }

/** What a worker is asked to do: one evaluation and what its answer and log entry need. */
export interface PoolTask {
  /** The workspace the evaluation is for: its judge calls are that workspace's. */
  workspace: string
  policies: PoolPolicy[]
  conversation: ConversationInput
  /** A judge is configured: the worker asks the main thread for its answers. */
  judge: boolean
  /** Time each rule, for the rule duration metric. */
  timed: boolean
  /** The request asked for `redacted`. */
  redact: boolean
  /** The log keeps redacted texts (EVALUATION_LOG_CONTENT=redacted): make them in the worker. */
  logRedacted: boolean
}

/** What a worker answers: the outcome, and what was derived from its findings where they are. */
export interface PoolResult {
  /** The problems of unchecked drafts: the evaluation did not run, and answers 422. */
  invalid: FieldError[] | null
  outcome: Omit<EvaluationOutcome, 'redactable'>
  redacted: RedactedConversation | null
  redactedLog: RedactedLog | null
  /** Each rule's duration when `timed`: [type, method, seconds]. */
  observed: [RuleType, RuleMethod, number][]
}

/** Messages from the main thread to a worker. */
export type ToWorker =
  | { kind: 'task'; id: number; task: PoolTask }
  | { kind: 'judged'; id: number; call: number; answer: JudgeScore | null; failure: string | null }

/** Messages from a worker to the main thread. */
export type FromWorker =
  | { kind: 'ready' }
  | { kind: 'done'; id: number; result: PoolResult }
  | { kind: 'failed'; id: number; message: string }
  | { kind: 'judge'; id: number; call: number; question: JudgeQuestion }

interface Pending {
  workspace: string
  resolve: (result: PoolResult) => void
  reject: (error: unknown) => void
  timer: NodeJS.Timeout
  /** The judge calls' abort signal, made when the first call is asked for. */
  signal: () => AbortSignal
}

interface Slot {
  worker: Worker
  pending: Map<number, Pending>
  /** Why the worker is being stopped by the pool, if it is: what its tasks answer. */
  stopping: Error | null
}

export interface EvaluationPoolOptions {
  /** Worker threads, at most (EVALUATION_POOL_SIZE). */
  size: number
  /** The worker's entry module (`workerEntry()`). */
  entry: URL
  /** How long one evaluation may take in a worker before the worker is replaced and it answers 503. */
  timeoutMs: number
  judge: Judge | null
}

/**
 * The worker entry beside the running code: `evaluation-worker.mjs` next to the bundle
 * (dist/warden.mjs), or `evaluation-worker.js` next to this module as tsc emits it. Null when
 * running from the TypeScript sources (the tests), which have neither: the pool is then off
 * unless a test hands in an entry.
 */
export function workerEntry(): URL | null {
  for (const name of ['./evaluation-worker.mjs', './evaluation-worker.js']) {
    const url = new URL(name, import.meta.url)
    if (existsSync(url)) return url
  }
  return null
}

const unavailable = (detail: string) => new AppError('unavailable', detail, undefined, { 'Retry-After': '1' })

export class EvaluationPool {
  private readonly slots: Slot[] = []
  private next = 1
  private closed = false

  constructor(private readonly options: EvaluationPoolOptions) {}

  /** Starts every worker now, in the background (each loads the offline models, about 0.5 s). */
  start(): void {
    while (!this.closed && this.slots.length < this.options.size) this.spawn()
  }

  /**
   * Runs one evaluation in the least busy worker (starting one when fewer than `size` run and
   * all are busy). Rejects, never answers a verdict it did not reach: a worker that crashes
   * rejects with an Error (500), one that takes longer than `timeoutMs` is replaced and its
   * evaluations reject with 503 `unavailable`.
   */
  run(task: PoolTask, signal: () => AbortSignal, observe?: RuleObserver): Promise<PoolResult> {
    if (this.closed) return Promise.reject(unavailable('Warden is stopping'))
    const slot = this.pick()
    const id = this.next++
    return new Promise<PoolResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.stop(
          slot,
          unavailable(
            `The evaluation did not finish within ${this.options.timeoutMs} ms in the evaluation pool`,
          ),
        )
      }, this.options.timeoutMs)
      timer.unref()
      let made: AbortSignal | null = null
      slot.pending.set(id, {
        workspace: task.workspace,
        resolve: (result) => {
          if (observe) for (const [type, method, seconds] of result.observed) observe(type, method, seconds)
          resolve(result)
        },
        reject,
        timer,
        signal: () => {
          made ??= signal()
          return made
        },
      })
      slot.worker.postMessage({ kind: 'task', id, task } satisfies ToWorker)
    })
  }

  /** Stops every worker; evaluations still in one reject with 503. */
  async close(): Promise<void> {
    this.closed = true
    const slots = [...this.slots]
    await Promise.all(slots.map((slot) => this.stop(slot, unavailable('Warden is stopping'))))
  }

  private pick(): Slot {
    let best: Slot | null = null
    for (const slot of this.slots) if (best === null || slot.pending.size < best.pending.size) best = slot
    if (best !== null && (best.pending.size === 0 || this.slots.length >= this.options.size)) return best
    return this.spawn()
  }

  private spawn(): Slot {
    const worker = new Worker(this.options.entry)
    // An idle pool never keeps the process alive.
    worker.unref()
    const slot: Slot = { worker, pending: new Map(), stopping: null }
    this.slots.push(slot)
    worker.on('message', (message: FromWorker) => this.receive(slot, message))
    worker.on('error', (error) => this.fail(slot, error))
    worker.on('exit', (code) => this.fail(slot, new Error(`an evaluation worker exited with code ${code}`)))
    return slot
  }

  private receive(slot: Slot, message: FromWorker): void {
    if (message.kind === 'ready') return
    const pending = slot.pending.get(message.id)
    if (!pending) return
    switch (message.kind) {
      case 'done':
        this.settle(slot, message.id)
        pending.resolve(message.result)
        break
      case 'failed':
        this.settle(slot, message.id)
        pending.reject(new Error(`evaluation failed in an evaluation worker: ${message.message}`))
        break
      case 'judge':
        void this.judge(slot, message.id, message.call, message.question, pending.workspace, pending.signal)
        break
    }
  }

  /** Asks the judge for a worker, answering what the rule shows exactly as evaluate's `ask` would. */
  private async judge(
    slot: Slot,
    id: number,
    call: number,
    question: JudgeQuestion,
    workspace: string,
    signal: () => AbortSignal,
  ): Promise<void> {
    const judge = this.options.judge
    let reply: ToWorker
    try {
      if (judge === null) throw new JudgeError('no judge configured')
      const answer = await judge.score(question, { workspace, signal: signal() })
      reply = { kind: 'judged', id, call, answer, failure: null }
    } catch (error) {
      const failure =
        error instanceof JudgeError
          ? error.message
          : signal().aborted
            ? 'judge call aborted'
            : 'judge call failed'
      reply = { kind: 'judged', id, call, answer: null, failure }
    }
    if (slot.pending.has(id)) slot.worker.postMessage(reply)
  }

  private settle(slot: Slot, id: number): void {
    const pending = slot.pending.get(id)
    if (!pending) return
    clearTimeout(pending.timer)
    slot.pending.delete(id)
  }

  /** Replaces a worker: its evaluations reject with `reason`, and a later one starts another. */
  private async stop(slot: Slot, reason: Error): Promise<void> {
    if (slot.stopping === null) slot.stopping = reason
    this.fail(slot, reason)
    await slot.worker.terminate()
  }

  private fail(slot: Slot, error: Error): void {
    const index = this.slots.indexOf(slot)
    if (index >= 0) this.slots.splice(index, 1)
    const reason = slot.stopping ?? error
    for (const [id, pending] of slot.pending) {
      clearTimeout(pending.timer)
      slot.pending.delete(id)
      pending.reject(reason)
    }
  }
}

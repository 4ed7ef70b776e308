import { existsSync } from 'node:fs'
import { Worker } from 'node:worker_threads'
import { AppError, type FieldError } from '../errors.js'
import { FairQueue } from '../fair-queue.js'
import type { Judge } from '../judge/judge.js'
import type { Band } from '../rules/band.js'
import type { ConversationInput } from '../rules/conversation.js'
import {
  askScorer,
  type EvaluablePolicy,
  type EvaluationOutcome,
  type GuardScorer,
  type RedactedConversation,
  type RuleObserver,
  type ScorerAnswer,
} from '../rules/evaluate.js'
import type { ExternalQuestion } from '../rules/rule-types/rule-type.js'
import type { RuleMethod } from '../rules/types.js'
import type { PolicyCreate, PolicyRule, RuleType } from '../schemas/policies.js'
import type { PooledRedactedLog } from './redacted-log.js'

/**
 * The evaluation pool (docs/evaluation.md, "Large evaluations"): worker threads that run the
 * evaluations too large to run on the event loop without holding up every other request. A
 * worker compiles the policies it is sent and keeps them by the key the main thread's cache
 * uses (row sequence and revision), so a policy change reaches it exactly as it reaches the
 * main thread: the main thread reads the current revision from the store for every evaluation
 * and sends its key. Judge calls stay on the main thread (its connections, concurrency limit and
 * cache): a worker asks for them with a message, and waits without holding its thread.
 *
 * Workspaces share the pool fairly: evaluations wait in a queue per workspace, served in turn
 * (FairQueue), one at a time per worker; one workspace runs at most `size - 1` at once (1 with a
 * single worker), so with two workers or more one is always left for the others. A task's
 * timeout counts its own computing only, from when a worker starts it (waiting for a worker or
 * for the judge is not counted), and fails that task only: the worker is replaced, and the
 * evaluations it held waiting for the judge run again elsewhere.
 */

/**
 * One stored revision (keyed by row and revision; `run:…` for a policy compiled for one run, kept
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
  /** The guard detectors the workspace may use, with their cascade bands: the worker asks the main thread for their answers. */
  guards?: [string, Band | null][]
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
  redactedLog: PooledRedactedLog | null
  /** Each rule's duration when `timed`: [type, method, seconds]. */
  observed: [RuleType, RuleMethod, number][]
}

/**
 * Rules to check as a create checks them, their patterns compiled: those whose patterns cost
 * too much to compile on the event loop (cost.ts, COMPILE_BUDGET_MS).
 */
export interface CheckTask {
  workspace: string
  rules: PolicyRule[]
  definition: string | null
  /** Where the rules' pointers start (`''`, `/draft`). */
  base: string
}

/** Messages from the main thread to a worker. */
export type ToWorker =
  | { kind: 'task'; id: number; task: PoolTask }
  | { kind: 'check'; id: number; task: CheckTask }
  | { kind: 'judged'; id: number; answers: JudgeReply[] }

/** The judge's or a guard's answer to one call of a task as the rule reads it (`askScorer`), or why there is none. */
export interface JudgeReply {
  call: number
  answer: ScorerAnswer
}

/** Messages from a worker to the main thread. */
export type FromWorker =
  | { kind: 'ready' }
  | { kind: 'done'; id: number; result: PoolResult }
  | { kind: 'checked'; id: number; errors: FieldError[] }
  | { kind: 'failed'; id: number; message: string }
  /** Every judge call of a task's evaluation, asked together: the task then waits, off the worker's thread. */
  | { kind: 'judge'; id: number; calls: { call: number; question: ExternalQuestion }[] }

/** What a job asks of a worker: an evaluation, or a check of rules. */
type Work = { kind: 'task'; task: PoolTask } | { kind: 'check'; task: CheckTask }

/** One evaluation or check handed to the pool, from the queue to its answer. */
interface Job {
  id: number
  work: Work
  /** The workspace it is for, whose turn it waits for. */
  workspace: string
  resolve: (value: never) => void
  reject: (error: unknown) => void
  /** The judge calls' abort signal, made when the first call is asked for. */
  signal: () => AbortSignal
  /**
   * queued: waiting for a worker; running: the worker computes it; waiting: its judge calls are
   * out; resuming: their answers are in, to be handed to its worker once that is free.
   */
  state: 'queued' | 'running' | 'waiting' | 'resuming'
  slot: Slot | null
  /** Each start on a worker, so that an answer for an earlier one is recognised. */
  attempt: number
  /** Milliseconds computed so far in this attempt, and when the current stretch began. */
  spent: number
  since: number
  timer: NodeJS.Timeout | null
  replies: JudgeReply[]
  outstanding: number
}

interface Slot {
  worker: Worker
  /** The worker has loaded its models: a task sent now starts at once. */
  ready: boolean
  /** The task it computes, if any; the worker runs one at a time. */
  running: Job | null
  /** Its tasks waiting for the judge or for their turn to resume. */
  held: Set<Job>
  /** Why the pool is stopping the worker, if it is: what its tasks answer. */
  stopping: Error | null
}

export interface EvaluationPoolOptions {
  /** Worker threads, at most (EVALUATION_POOL_SIZE). */
  size: number
  /** The worker's entry module (`workerEntry()`). */
  entry: URL
  /**
   * How long one evaluation may compute in a worker (from when the worker starts it, waits for
   * the judge not counted) before the worker is replaced and it answers 503.
   */
  timeoutMs: number
  judge: Judge | null
  /** The guard detectors configured, or null. */
  guards?: GuardScorer | null
  /** The workers load the offline models' second stage (src/models/second-stage.ts) and use it. */
  second?: boolean
}

/**
 * The worker entry beside the running code: `evaluation-worker.mjs` next to the bundle
 * (dist/warden.mjs), or `worker.js` next to this module as tsc emits it. Null when
 * running from the TypeScript sources (the tests), which have neither: the pool is then off
 * unless a test hands in an entry.
 */
export function workerEntry(): URL | null {
  for (const name of ['./evaluation-worker.mjs', './worker.js']) {
    const url = new URL(name, import.meta.url)
    if (existsSync(url)) return url
  }
  return null
}

const unavailable = (detail: string) => new AppError('unavailable', detail, undefined, { 'Retry-After': '1' })

export class EvaluationPool {
  private readonly slots: Slot[] = []
  private readonly queue = new FairQueue<Job>()
  /** Tasks each workspace has running on a worker now. */
  private readonly running = new Map<string, number>()
  private next = 1
  private closed = false

  constructor(private readonly options: EvaluationPoolOptions) {}

  /** The most tasks one workspace runs at once: one worker is left for the others when there are two or more. */
  private get perWorkspace(): number {
    return Math.max(1, this.options.size - 1)
  }

  /** Starts every worker now, in the background (each loads the offline models, about 0.5 s). */
  start(): void {
    while (!this.closed && this.slots.length < this.options.size) this.spawn()
  }

  /**
   * Runs one evaluation for a workspace, in its turn. Rejects, never answers a verdict it did not
   * reach: a worker that crashes while computing it rejects with an Error (500); one that computes
   * it longer than `timeoutMs` is replaced and it rejects with 503 `unavailable`.
   */
  run(task: PoolTask, signal: () => AbortSignal, observe?: RuleObserver): Promise<PoolResult> {
    return this.submit<PoolResult>({ kind: 'task', task }, signal, (result) => {
      if (observe) for (const [type, method, seconds] of result.observed) observe(type, method, seconds)
    })
  }

  /**
   * Checks rules as a create does, their patterns compiled in a worker, in the workspace's turn:
   * the problems found, pointers under `task.base`. Fails as `run` does.
   */
  check(task: CheckTask): Promise<FieldError[]> {
    return this.submit<FieldError[]>({ kind: 'check', task }, () => new AbortController().signal)
  }

  private submit<T>(work: Work, signal: () => AbortSignal, seen?: (value: T) => void): Promise<T> {
    if (this.closed) return Promise.reject(unavailable('Warden is stopping'))
    return new Promise<T>((resolve, reject) => {
      let made: AbortSignal | null = null
      const job: Job = {
        id: this.next++,
        work,
        workspace: work.task.workspace,
        resolve: ((value: T) => {
          seen?.(value)
          resolve(value)
        }) as (value: never) => void,
        reject,
        signal: () => {
          made ??= signal()
          return made
        },
        state: 'queued',
        slot: null,
        attempt: 0,
        spent: 0,
        since: 0,
        timer: null,
        replies: [],
        outstanding: 0,
      }
      this.queue.push(job.workspace, job)
      this.start()
      this.dispatch()
    })
  }

  /** Stops every worker; evaluations waiting or under way reject with 503. */
  async close(): Promise<void> {
    this.closed = true
    const stopping = unavailable('Warden is stopping')
    for (const job of this.queue.drain()) job.reject(stopping)
    const slots = [...this.slots]
    await Promise.all(slots.map((slot) => this.stop(slot, stopping)))
  }

  /** Hands work to every free worker: an evaluation resuming after the judge first, then the next workspace's in turn. */
  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.running !== null || slot.stopping !== null) continue
      const resuming = [...slot.held].find((job) => job.state === 'resuming')
      if (resuming) {
        slot.held.delete(resuming)
        this.begin(slot, resuming)
        slot.worker.postMessage({
          kind: 'judged',
          id: resuming.id,
          answers: resuming.replies,
        } satisfies ToWorker)
        resuming.replies = []
        continue
      }
      const next = this.queue.shift((workspace) => (this.running.get(workspace) ?? 0) < this.perWorkspace)
      if (next === undefined) continue
      const job = next.item
      job.attempt++
      job.spent = 0
      job.slot = slot
      this.begin(slot, job)
      slot.worker.postMessage(
        (job.work.kind === 'task'
          ? { kind: 'task', id: job.id, task: job.work.task }
          : { kind: 'check', id: job.id, task: job.work.task }) satisfies ToWorker,
      )
    }
  }

  /** The worker computes `job` from now: its clock runs again, with what it has left. */
  private begin(slot: Slot, job: Job): void {
    job.state = 'running'
    slot.running = job
    const workspace = job.workspace
    this.running.set(workspace, (this.running.get(workspace) ?? 0) + 1)
    job.since = performance.now()
    const left = Math.max(0, this.options.timeoutMs - job.spent)
    job.timer = setTimeout(() => {
      void this.stop(
        slot,
        unavailable(
          `The evaluation did not finish within ${this.options.timeoutMs} ms in the evaluation pool`,
        ),
      )
    }, left)
    job.timer.unref()
  }

  /** `job` stops computing (done, failed, or waiting for the judge): its clock stops, its worker is free. */
  private end(slot: Slot, job: Job): void {
    if (job.timer) clearTimeout(job.timer)
    job.timer = null
    job.spent += performance.now() - job.since
    if (slot.running === job) slot.running = null
    const workspace = job.workspace
    const running = (this.running.get(workspace) ?? 1) - 1
    if (running === 0) this.running.delete(workspace)
    else this.running.set(workspace, running)
  }

  private spawn(): Slot {
    const worker = new Worker(this.options.entry, { workerData: { second: this.options.second === true } })
    // An idle pool never keeps the process alive.
    worker.unref()
    const slot: Slot = { worker, ready: false, running: null, held: new Set(), stopping: null }
    this.slots.push(slot)
    worker.on('message', (message: FromWorker) => this.receive(slot, message))
    worker.on('error', (error) => this.fail(slot, error))
    worker.on('exit', (code) => this.fail(slot, new Error(`an evaluation worker exited with code ${code}`)))
    return slot
  }

  private receive(slot: Slot, message: FromWorker): void {
    if (message.kind === 'ready') {
      slot.ready = true
      this.dispatch()
      return
    }
    const job = slot.running
    if (job === null || job.id !== message.id) return
    switch (message.kind) {
      case 'done':
        this.end(slot, job)
        job.resolve(message.result as never)
        break
      case 'checked':
        this.end(slot, job)
        job.resolve(message.errors as never)
        break
      case 'failed':
        this.end(slot, job)
        job.reject(new Error(`evaluation failed in an evaluation worker: ${message.message}`))
        break
      case 'judge':
        this.end(slot, job)
        job.state = 'waiting'
        slot.held.add(job)
        job.outstanding = message.calls.length
        for (const { call, question } of message.calls)
          void this.judge(slot, job, job.attempt, call, question)
        break
    }
    this.dispatch()
  }

  /** Asks the judge or a guard for a worker's task, and answers what the rule reads (`askScorer`). */
  private async judge(
    slot: Slot,
    job: Job,
    attempt: number,
    call: number,
    asked: ExternalQuestion,
  ): Promise<void> {
    const scorers = { judge: this.options.judge, guards: this.options.guards ?? null }
    const reply: JudgeReply = { call, answer: await askScorer(asked, scorers, job.workspace, job.signal()) }
    // The task ran again elsewhere, or ended, meanwhile: this answer is for nobody.
    if (job.attempt !== attempt || job.slot !== slot || job.state !== 'waiting') return
    job.replies.push(reply)
    if (--job.outstanding > 0) return
    job.state = 'resuming'
    this.dispatch()
  }

  /** Replaces a worker on purpose (`fail`'s consequences, with `reason`). */
  private async stop(slot: Slot, reason: Error): Promise<void> {
    if (slot.stopping === null) slot.stopping = reason
    this.fail(slot, reason)
    await slot.worker.terminate()
  }

  /**
   * A worker is gone: the task it was computing, the one to blame, rejects with the reason; the
   * tasks it held waiting for the judge go back to the head of their workspace's queue, to run
   * again from the start on another worker (they reject too when the pool is closing).
   */
  private fail(slot: Slot, error: Error): void {
    const index = this.slots.indexOf(slot)
    if (index < 0) return
    this.slots.splice(index, 1)
    const reason = slot.stopping ?? error
    const running = slot.running
    if (running !== null) {
      this.end(slot, running)
      running.reject(reason)
    }
    for (const job of slot.held) {
      job.state = 'queued'
      job.slot = null
      job.replies = []
      if (this.closed) job.reject(reason)
      else this.queue.unshift(job.workspace, job)
    }
    slot.held.clear()
    if (this.closed) return
    if (!slot.ready && this.slots.every((other) => !other.ready)) {
      // No worker could start: nothing queued would ever run. Fail it rather than wait for good.
      for (const job of this.queue.drain()) job.reject(reason)
      return
    }
    if (this.queue.size > 0) this.start()
    this.dispatch()
  }
}

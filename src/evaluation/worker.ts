import { parentPort, workerData } from 'node:worker_threads'
import { LRUCache } from 'lru-cache'
import type { FieldError } from '../errors.js'
import { shippedSecondStage } from '../models/second-stage.js'
import { shippedClassifiers } from '../models/shipped.js'
import {
  type CompiledPolicy,
  compilePolicy,
  evaluate,
  type RemoteScorers,
  redactConversation,
  type ScorerAnswer,
} from '../rules/evaluate.js'
import type { ExternalQuestion } from '../rules/rule-types/rule-type.js'
import { checkRules } from '../rules/validation.js'
import { logTextsJson } from './log-json.js'
import { draftPolicy } from './policy-for-evaluation.js'
import type { FromWorker, PoolResult, PoolTask, ToWorker } from './pool.js'
import { redactedLog } from './redacted-log.js'
import { classifiersFor } from './workspace-classifiers.js'

/**
 * An evaluation pool's worker (pool.ts): evaluates what the main thread sends, with
 * the offline models Warden ships, and asks the main thread for the judge's answers.
 */

/** Compiled revisions by the main thread's key (row sequence and revision), as its cache keeps them. */
const COMPILED_CACHE_SIZE = 10_000

const port = parentPort
if (port === null) throw new Error('the evaluation worker runs only as a worker thread')

const classifiers = shippedClassifiers()
/** The offline models' second stage, loaded once for this worker when the pool uses one. */
const second =
  (workerData as { second?: boolean } | null)?.second === true ? await shippedSecondStage() : null
const compiled = new LRUCache<string, CompiledPolicy>({ max: COMPILED_CACHE_SIZE })
/** Policies compiled for one run (keys `run:…`: a draft under test): needed only while their run lasts. */
const testRuns = new LRUCache<string, CompiledPolicy>({ max: 16 })

/** Judge and guard calls waiting for the main thread, by task and call number. */
const calls = new Map<string, (answer: ScorerAnswer) => void>()
let nextCall = 1

const send = (message: FromWorker, transfer?: ArrayBuffer[]) => port.postMessage(message, transfer)

/**
 * The judge and the guards for task `id`, asked of the main thread, which answers each question
 * as the rule reads it (`askScorer`). An evaluation asks all its questions at once, before it
 * waits: they leave together, once it has, so that the main thread knows this thread is free for
 * another task until their answers come back.
 */
function remoteFor(id: number, task: PoolTask): RemoteScorers {
  let batch: { call: number; question: ExternalQuestion }[] | null = null
  return {
    judge: task.judge,
    guards: new Map((task.guards ?? []).map(([name, cascade]) => [name, { cascade }])),
    ask(question) {
      const call = nextCall++
      if (batch === null) {
        const asked: { call: number; question: ExternalQuestion }[] = []
        batch = asked
        queueMicrotask(() => {
          batch = null
          send({ kind: 'judge', id, calls: asked })
        })
      }
      batch.push({ call, question })
      return new Promise((resolve) => {
        calls.set(`${id}:${call}`, resolve)
      })
    },
  }
}

const empty = {
  verdict: 'pass',
  action: 'allow',
  override_response: null,
  policies: [],
  masking: null,
} as const

async function run(id: number, task: PoolTask): Promise<PoolResult> {
  const invalid: FieldError[] = []
  const policies = task.policies.map((sent) => {
    if ('unchecked' in sent) {
      const { policy, errors } = draftPolicy(sent.unchecked, sent.at, { workspace: task.workspace })
      invalid.push(...errors)
      return policy
    }
    return sent
  })
  if (invalid.length > 0)
    return { invalid, outcome: { ...empty, policies: [] }, redacted: null, redactedLog: null, observed: [] }
  // The workspace's own view of the models: their remembered scores are its own.
  const mine = classifiersFor(classifiers, task.workspace)
  const evaluated = policies.map((sent) => {
    if (!('key' in sent)) return compilePolicy(sent, mine)
    const { key, policy } = sent
    if (key === null) return compilePolicy(policy, mine)
    const cache = key.startsWith('run:') ? testRuns : compiled
    let found = cache.get(key)
    if (!found) {
      found = compilePolicy(policy, mine)
      cache.set(key, found)
    }
    return found
  })
  const observed: PoolResult['observed'] = []
  const outcome = await evaluate(evaluated, task.conversation, {
    judge: null,
    remote: remoteFor(id, task),
    second,
    workspace: task.workspace,
    ...(task.timed ? { observeRule: (type, method, seconds) => observed.push([type, method, seconds]) } : {}),
  })
  const redacted = task.redact ? redactConversation(task.conversation, outcome) : null
  // The log's texts are written here, off the event loop, and move to the main thread as bytes.
  const log = task.logRedacted
    ? redactedLog(outcome.policies, task.conversation, outcome, redacted ?? undefined)
    : null
  return {
    invalid: null,
    outcome: {
      verdict: outcome.verdict,
      action: outcome.action,
      override_response: outcome.override_response,
      policies: outcome.policies,
      masking: outcome.masking,
    },
    redacted,
    redactedLog: log ? { policies: log.policies, texts: logTextsJson(log.conversation) } : null,
    observed,
  }
}

port.on('message', (message: ToWorker) => {
  if (message.kind === 'check') {
    const { rules, definition, base, workspace } = message.task
    let reply: FromWorker
    try {
      reply = { kind: 'checked', id: message.id, errors: checkRules(rules, definition, base, { workspace }) }
    } catch (error) {
      reply = {
        kind: 'failed',
        id: message.id,
        message: error instanceof Error ? error.message : String(error),
      }
    }
    send(reply)
    return
  }
  if (message.kind === 'judged') {
    for (const reply of message.answers) {
      const key = `${message.id}:${reply.call}`
      const resolve = calls.get(key)
      if (!resolve) continue
      calls.delete(key)
      resolve(reply.answer)
    }
    return
  }
  run(message.id, message.task).then(
    (result) => {
      // The log's texts move (a transfer, not a copy): nothing here reads them again.
      const texts = result.redactedLog?.texts
      send({ kind: 'done', id: message.id, result }, texts ? [texts.buffer as ArrayBuffer] : undefined)
    },
    (error: unknown) =>
      send({
        kind: 'failed',
        id: message.id,
        message: error instanceof Error ? error.message : String(error),
      }),
  )
})

send({ kind: 'ready' })

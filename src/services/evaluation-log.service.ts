import { setTimeout as sleep } from 'node:timers/promises'
import type { Clock } from '../clock.js'
import type { EvaluationLogContent } from '../config.js'
import { AppError, notFound } from '../errors.js'
import { entryJson, type LogHead, type LogTexts, serializeEntry } from '../evaluation/log-json.js'
import { type PooledRedactedLog, redactedLog } from '../evaluation/redacted-log.js'
import { type ConversationInput, type ConversationMessage, messageText } from '../rules/conversation.js'
import type { EvaluationOutcome } from '../rules/evaluate.js'
import { maskContext, maskedLabel, maskMessages, numbered } from '../rules/masking.js'
import type {
  Evaluation,
  EvaluationListQuery,
  EvaluationSource,
  LoggedEvaluation,
} from '../schemas/evaluations.js'
import type { ChatMessage } from '../schemas/messages.js'
import type { Store } from '../store/database.js'
import { pageJson } from '../store/documents.js'
import {
  deleteEvaluations,
  findApplicationSeq,
  findEvaluationDocument,
  insertEvaluation,
  type LogEntryRow,
  type LogPosition,
  listEvaluationDocuments,
  oldestEvaluations,
} from '../store/evaluations.repository.js'
import { Utf8Text } from '../store/statements.js'
import { encodeCursor } from './support/pagination.js'
import { applicationNotFound } from './support/records.js'

/** Who asked for an evaluation, for the evaluation log. */
export interface EvaluationCaller {
  workspaceId: string
  /** The API key that asked. */
  keyId: string
  /** The request it came in, so that the evaluations of one request (a guarded chat completion's input and output) can be found together. */
  requestId: string
}

/** One evaluation to log: who asked, what was evaluated, and the answer given. */
export interface EvaluationRecord {
  caller: EvaluationCaller
  /**
   * The application's row, read with its policies (`findEvaluatedApplication`). An application
   * deleted since still gets the entry, under its old row: the evaluation was answered for it, and
   * its log is gone from view with it.
   */
  appSeq: number
  source: EvaluationSource
  conversation: ConversationInput
  outcome: EvaluationOutcome
  answer: Evaluation
  /**
   * The entry's redacted policies and texts (EVALUATION_LOG_CONTENT `redacted`), when they were
   * made where the evaluation ran (the evaluation pool): `outcome.redactable` is then empty, and
   * the texts come written (`logTextsJson`).
   */
  redactedLog?: PooledRedactedLog
}

const decoder = new TextDecoder()

/**
 * The entry the log keeps of an evaluation, as `content` allows (EVALUATION_LOG_CONTENT):
 * - `redacted`: the texts with every pii, keywords and regex finding replaced by [KIND]
 *   (`redacted`, docs/evaluation.md), those findings' `text` by the same label, and any occurrence of
 *   a found text (reported or past a rule's cap) in a rule's reason (a judge may quote what it
 *   read) too. A card number in
 *   `findings[].text` would otherwise defeat the redaction of the messages.
 * - `none`: no text of the conversation at all: no messages or context, every finding's `text`
 *   null, the judge's and guards' reasons and a guard's written verdict null (errors keep
 *   theirs: those are Warden's own words).
 * - `full`: everything as evaluated.
 */
export function logEntry(record: EvaluationRecord, content: EvaluationLogContent): LoggedEvaluation {
  const { answer, conversation, outcome } = record
  let policies: Evaluation['policies'] = answer.policies
  let messages: LoggedEvaluation['messages'] = null
  let context: LoggedEvaluation['context'] = null
  if (content === 'redacted' && record.redactedLog) {
    // Made in the evaluation pool's worker when the evaluation ran there, its texts written.
    policies = record.redactedLog.policies
    ;({ messages, context } = JSON.parse(decoder.decode(record.redactedLog.texts)) as LogTexts)
  } else if (content === 'redacted') {
    const redacted = redactedLog(answer.policies, conversation, outcome, answer.redacted)
    policies = redacted.policies
    messages = redacted.conversation.messages
    context = redacted.conversation.context
  } else if (content === 'none') {
    policies = answer.policies.map((policy) => ({
      ...policy,
      rules: policy.rules.map((rule) => ({
        ...rule,
        reason:
          (rule.method === 'judge' || rule.method === 'guard') && rule.status !== 'error'
            ? null
            : rule.reason,
        findings: rule.findings.map((f) => ({ ...f, text: null })),
        // A guard model writes its answer: it may quote what it read.
        ...(rule.guard ? { guard: { ...rule.guard, verdict: null } } : {}),
      })),
    }))
  } else {
    // Everything as evaluated, except masked values: they stand as their placeholders, as sent on.
    const plan = outcome.masking
    const write = plan ? numbered(plan) : null
    const read = (
      plan && write
        ? maskMessages(conversation.messages as ChatMessage[], plan, write)
        : conversation.messages
    ) as ConversationInput['messages']
    messages = read.map((m) => ({
      role: m.role,
      content: messageText(m.content as ConversationMessage['content']),
    }))
    context =
      plan && write ? maskContext(conversation.context ?? [], plan, write) : [...(conversation.context ?? [])]
    const label = maskedLabel(plan)
    if (answer.policies.some((p) => p.rules.some((r) => r.status === 'masked')))
      policies = answer.policies.map((policy) => ({
        ...policy,
        rules: policy.rules.map((rule) =>
          rule.status === 'masked'
            ? {
                ...rule,
                findings: rule.findings.map((f) => ({ ...f, text: f.text === null ? null : label(f) })),
              }
            : rule,
        ),
      }))
  }
  return { ...entryHead(record, policies, content), messages, context }
}

/** The entry without its texts. */
function entryHead(
  record: EvaluationRecord,
  policies: Evaluation['policies'],
  content: EvaluationLogContent,
): LogHead {
  const { answer, caller, source } = record
  return {
    id: answer.id,
    application_id: answer.application_id,
    created: answer.created,
    verdict: answer.verdict,
    action: answer.action,
    override_response: answer.override_response,
    latency_ms: answer.latency_ms,
    policies,
    key_id: caller.keyId,
    request_id: caller.requestId,
    source,
    content,
  }
}

/**
 * The row that logs `record`. An entry whose texts the evaluation pool's worker wrote is joined
 * as bytes (`entryJson`: the head written here, the texts copied once after it), which move on to
 * the store's writer thread without a copy: the event loop neither serializes nor encodes a large
 * conversation's text, nor clones it for another thread. Any other entry is written here.
 */
function entryRow(record: EvaluationRecord, content: EvaluationLogContent): LogEntryRow {
  let entry: LogHead
  let doc: LogEntryRow['doc']
  if (content === 'redacted' && record.redactedLog) {
    entry = entryHead(record, record.redactedLog.policies, content)
    doc = new Utf8Text(entryJson(entry, record.redactedLog.texts))
  } else {
    const whole = logEntry(record, content)
    entry = whole
    doc = serializeEntry(whole)
  }
  return {
    appSeq: record.appSeq,
    id: entry.id,
    created: entry.created,
    verdict: entry.verdict,
    source: entry.source,
    policyIds: [...new Set(entry.policies.map((p) => p.id))],
    doc,
  }
}

const evaluationNotFound = (id: string) => notFound(`No evaluation "${id}" in this application's log`)

const badCursor = () =>
  new AppError('validation_error', 'The cursor is not one this API issued', [
    {
      pointer: '#/query/cursor',
      detail: 'is not a cursor this API issued; pass next_cursor from the previous page',
    },
  ])

/** A log position as an opaque cursor, and back (a cursor of another list is refused). */
const encodeLogCursor = (at: LogPosition) => encodeCursor(`log:${at.created}:${at.seq}`)
function decodeLogCursor(cursor: string | undefined): LogPosition | null {
  if (cursor === undefined) return null
  let position: unknown
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      v?: unknown
      p?: unknown
    }
    position = parsed.v === 1 ? parsed.p : undefined
  } catch {
    throw badCursor()
  }
  const match = typeof position === 'string' ? /^log:(\d{1,15}):(\d{1,15})$/.exec(position) : null
  if (!match) throw badCursor()
  return { created: Number(match[1]), seq: Number(match[2]) }
}

/**
 * Entries deleted per transaction by retention. A batch blocks SQLite's connection (and so the
 * event loop) while it runs: measured on the 10,000,000-entry log, 1,000 entries took about
 * 57 ms a batch and the reads served meanwhile had a p99 of 473 ms (64 ms without retention);
 * with 200 and the pause below, 51 ms (25 ms without), a day of that log deleted in 74 s.
 */
export const RETENTION_BATCH = 200
/**
 * Retention rests between two batches at least twice as long as the batch took (and at least
 * this long): it never takes more than a third of the store's time, however large the backlog.
 * (Resting four times as long halved neither the reads' p99 nor their rate meanwhile, measured:
 * the cost is the pages the deletes write, not the batches' turns. It only took twice as long.)
 */
const RETENTION_PAUSE_MS = 5
/** How often retention looks for expired entries. */
const RETENTION_EVERY_MS = 10 * 60_000

export interface PurgeOptions {
  batchSize?: number
  /** Awaited between two batches; by default a pause twice as long as the batch took. */
  pause?: () => Promise<void>
  /** Stops after the batch under way. */
  signal?: AbortSignal
}

/** The evaluation log (docs/log-and-tests.md): every evaluation recorded, listed, and kept for a time. */
export class EvaluationLogService {
  private retentionTimer: NodeJS.Timeout | undefined
  private retentionStop: AbortController | undefined
  private purging: Promise<unknown> | undefined

  constructor(
    private readonly deps: {
      store: Store
      clock: Clock
      /** What is kept of the evaluated texts (EVALUATION_LOG_CONTENT). */
      content: EvaluationLogContent
      /** Days an entry is kept (EVALUATION_RETENTION_DAYS). */
      retentionDays: number
    },
  ) {}

  /** What the log keeps of the evaluated texts (EVALUATION_LOG_CONTENT). */
  get content(): EvaluationLogContent {
    return this.deps.content
  }

  /**
   * Logs one evaluation, durably: it resolves once the entry is committed (on SQLite in the group
   * commit that carries it, on PostgreSQL in a transaction of its own), and throws if it is not,
   * so an evaluation is answered only once it is in the log.
   */
  async record(record: EvaluationRecord): Promise<void> {
    await this.recordAll([record])
  }

  /** Writes several entries in one commit (a guarded chat completion's input and outputs). */
  async recordAll(records: readonly EvaluationRecord[]): Promise<void> {
    const { store } = this.deps
    const rows = records.map((record) => entryRow(record, this.deps.content))
    if (rows.length === 0) return
    await store.write(async ({ statements }) => {
      for (const row of rows) await insertEvaluation(statements, row)
    })
  }

  /** One page of an application's log, newest first, as the JSON text of the answer. */
  async list(workspaceId: string, applicationId: string, query: EvaluationListQuery): Promise<string> {
    const { db, statements } = this.deps.store
    const after = decodeLogCursor(query.cursor)
    const appSeq = await findApplicationSeq(statements, workspaceId, applicationId)
    if (appSeq === undefined) throw applicationNotFound(applicationId)
    const page = await listEvaluationDocuments(
      db,
      appSeq,
      {
        verdict: query.verdict,
        source: query.source,
        policyId: query.policy_id,
        since: query.since,
        until: query.until,
      },
      after,
      query.limit ?? 50,
    )
    return pageJson(page.docs, page.last === null ? null : encodeLogCursor(page.last))
  }

  /** One entry's JSON text; its id is its entity tag (an entry never changes). */
  async get(workspaceId: string, applicationId: string, id: string): Promise<{ json: string; etag: string }> {
    const { statements } = this.deps.store
    const appSeq = await findApplicationSeq(statements, workspaceId, applicationId)
    if (appSeq === undefined) throw applicationNotFound(applicationId)
    const doc = await findEvaluationDocument(statements, appSeq, id)
    if (doc === undefined) throw evaluationNotFound(id)
    return { json: doc, etag: id }
  }

  /**
   * Deletes the entries older than the retention period, oldest first, `batchSize` per
   * transaction with a pause twice as long as the transaction took between two: a backlog of
   * millions never holds the store for long, nor for more than a third of its time. It walks the log in sequence order (the order entries were written, so of their
   * times too) and stops at the first window of entries none of which has expired. Returns how
   * many entries it deleted.
   */
  async purgeExpired(options: PurgeOptions = {}): Promise<number> {
    const { store, clock, retentionDays } = this.deps
    const batchSize = options.batchSize ?? RETENTION_BATCH
    const cutoff = clock.nowSeconds() - retentionDays * 86_400
    let deleted = 0
    for (let after = 0; !options.signal?.aborted; ) {
      const started = performance.now()
      const window = await oldestEvaluations(store.db, after, batchSize)
      const expired = window.filter((entry) => entry.created < cutoff)
      const first = expired[0]
      const last = expired[expired.length - 1]
      if (!first || !last) break
      deleted += await store.write(({ db }) => deleteEvaluations(db, first.seq, last.seq, cutoff))
      after = last.seq
      const took = performance.now() - started
      await (options.pause ? options.pause() : sleep(Math.max(RETENTION_PAUSE_MS, 2 * took)))
    }
    return deleted
  }

  /** Runs retention now and every ten minutes, until `stopRetention`. */
  startRetention(onError: (error: unknown) => void, everyMs = RETENTION_EVERY_MS): void {
    if (this.retentionTimer) return
    const stop = new AbortController()
    this.retentionStop = stop
    const run = () => {
      if (this.purging || stop.signal.aborted) return
      this.purging = this.purgeExpired({ signal: stop.signal })
        .catch(onError)
        .finally(() => {
          this.purging = undefined
        })
    }
    run()
    this.retentionTimer = setInterval(run, everyMs).unref()
  }

  /** Stops retention; resolves once a batch under way has finished. */
  async stopRetention(): Promise<void> {
    clearInterval(this.retentionTimer)
    this.retentionTimer = undefined
    this.retentionStop?.abort()
    await this.purging
  }
}

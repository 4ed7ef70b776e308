import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads'
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely'
import { StoreUnavailableError } from './errors.js'
import type {
  CheckpointerThreadData,
  SegmentFailure,
  WriterAnswer,
  WriterRequest,
  WriterThreadData,
} from './sqlite-writer-protocol.js'
import { type DirectConnection, Utf8Text } from './statements.js'

/**
 * The threads' entry modules, beside this one in src/ and in tsc's dist/store/, and beside the
 * bundle in dist/ (scripts/bundle.mjs puts them there).
 */
const WRITER_THREAD = new URL('./sqlite-writer-thread.js', import.meta.url)
const CHECKPOINTER_THREAD = new URL('./sqlite-checkpointer-thread.js', import.meta.url)

/**
 * The longest the event loop waits for one statement inside a transaction. Such a statement never
 * waits for a lock (its transaction already holds the write lock) nor for a sync, so reaching
 * this means the thread is gone or the disk has stopped answering.
 */
const STATEMENT_TIMEOUT_MS = 15_000

/**
 * Commits after which the checkpointer checkpoints (PASSIVE). Small checkpoints keep the disk's
 * work for one short: every 1,000 commits, their write-back stalled the commits' own fsync and the
 * evaluation p99 at 1,000 req/s was 57–63 ms; every 20, 12.5–14 ms; every 5, 9 ms (bench/README.md).
 */
const CHECKPOINT_COMMITS = 5

export interface SqliteWriterOptions {
  /** Past this size the write-ahead log is checkpointed with TRUNCATE (SQLITE_WAL_TRUNCATE_MB). */
  walTruncateBytes: number
}

type Settle = { resolve(value: unknown): void; reject(error: unknown): void }

export function toError(error: SegmentFailure['error']): Error {
  return Object.assign(new Error(error.message), { name: error.name, code: error.code })
}

/**
 * `parameters` with each `Utf8Text` as its bytes, whose buffer goes in `transfer` when the bytes
 * are the whole of it (a view of part of a buffer is copied: moving it would take the rest).
 */
function movedParameters(
  parameters: readonly unknown[] | undefined,
  transfer: ArrayBuffer[],
): readonly unknown[] | undefined {
  if (parameters === undefined) return parameters
  let out: unknown[] | undefined
  for (let i = 0; i < parameters.length; i++) {
    const value = parameters[i]
    if (!(value instanceof Utf8Text)) continue
    out ??= [...parameters]
    const { bytes } = value
    const buffer = bytes.buffer
    if (
      buffer instanceof ArrayBuffer &&
      bytes.byteOffset === 0 &&
      bytes.byteLength === buffer.byteLength &&
      !transfer.includes(buffer)
    )
      transfer.push(buffer)
    out[i] = bytes
  }
  return out ?? parameters
}

function answerValue(answer: WriterAnswer): unknown {
  if ('error' in answer) throw toError(answer.error)
  return answer.value
}

/**
 * The event loop's side of the SQLite writer thread (`sqlite-writer-thread.js`), which owns the
 * store's write connection, and of the checkpointer thread beside it. Statements nobody waits for
 * (BEGIN, a group commit's writes) are queued (`send`) and leave with the next request; a
 * statement whose answer a transaction needs waits a few microseconds for it (`call`); COMMIT,
 * ROLLBACK and statements outside a transaction are awaited (`request`), so a commit's fsync and
 * every checkpoint run while the event loop serves other requests.
 */
export class SqliteWriter {
  /** Commits this process has made; it moves before the callers of a commit hear of it. */
  commits = 0
  /**
   * The segments (`GroupCommit`'s writes) of the last commit whose sent statements failed. The
   * commit's caller reads them before any other commit can be answered (answers arrive one
   * turn of the event loop at a time).
   */
  failedSegments: SegmentFailure[] = []
  /** The writer's connection as the fast path's statements run on it inside a transaction. */
  readonly direct: DirectConnection
  private readonly control = new Int32Array(new SharedArrayBuffer(16))
  private readonly worker: Worker
  /** The checkpointer thread; none for a `:memory:` store. */
  private checkpointer: Worker | undefined
  private readonly requests: MessagePort
  private readonly replies: MessagePort
  private readonly done: MessagePort
  private readonly waiting = new Map<number, Settle>()
  private outbox: WriterRequest[] = []
  /** The buffers of the outbox's `Utf8Text` parameters: they move with it (a transfer, not a copy). */
  private outboxTransfer: ArrayBuffer[] = []
  private nextId = 1
  private failure: Error | undefined

  constructor(path: string, options: SqliteWriterOptions) {
    const requests = new MessageChannel()
    const replies = new MessageChannel()
    const done = new MessageChannel()
    const data: WriterThreadData = {
      path,
      control: this.control.buffer as SharedArrayBuffer,
      requests: requests.port2,
      replies: replies.port1,
      done: done.port1,
    }
    this.worker = new Worker(WRITER_THREAD, {
      workerData: data,
      transferList: [requests.port2, replies.port1, done.port1],
    })
    this.requests = requests.port1
    this.replies = replies.port2
    this.done = done.port2
    this.done.on('message', (answer: WriterAnswer) => this.settle(answer))
    this.done.unref()
    this.worker.unref()
    this.worker.on('error', (error) => this.fail(error))
    this.worker.on('exit', (code) => this.fail(new Error(`the writer thread stopped (exit code ${code})`)))
    this.call('open')
    // The database exists now, in WAL mode: the checkpointer can open it.
    if (path !== ':memory:') {
      const checkpointing: CheckpointerThreadData = {
        path,
        control: data.control,
        checkpointCommits: CHECKPOINT_COMMITS,
        truncateBytes: options.walTruncateBytes,
      }
      this.checkpointer = new Worker(CHECKPOINTER_THREAD, { workerData: checkpointing })
      this.checkpointer.unref()
      // A checkpointer that fails leaves checkpoints to the next start; commits go on.
      this.checkpointer.on('error', () => {})
      this.checkpointer.on('exit', () => {
        this.checkpointer = undefined
      })
    }
    this.direct = {
      run: (sql, parameters) => {
        const value = this.call('run', sql, parameters)
        return Array.isArray(value) ? value : []
      },
      first: (sql, parameters) => this.call('first', sql, parameters),
      column: (sql, parameters) => this.call('column', sql, parameters) as unknown[],
      send: (sql, parameters) => this.send('send', sql, parameters),
      // Inside a transaction every read already sees one state of the store.
      snapshot: (read) => read(),
    }
  }

  /** Runs one request in the writer thread and waits for its answer, holding the event loop. */
  call(op: WriterRequest['op'], sql?: string, parameters?: readonly unknown[]): unknown {
    if (this.failure) throw new StoreUnavailableError(this.failure)
    const transfer: ArrayBuffer[] = []
    this.post({ id: 0, op, sql, parameters: movedParameters(parameters, transfer), answer: 'sync' }, transfer)
    const deadline = Date.now() + STATEMENT_TIMEOUT_MS
    for (;;) {
      const seen = Atomics.load(this.control, 1)
      const received = receiveMessageOnPort(this.replies)
      if (received) return answerValue(received.message as WriterAnswer)
      const left = deadline - Date.now()
      if (left <= 0) {
        this.fail(new Error(`the writer thread did not answer within ${STATEMENT_TIMEOUT_MS} ms`))
        throw new StoreUnavailableError(this.failure)
      }
      Atomics.wait(this.control, 1, seen, left)
    }
  }

  /** Runs one request in the writer thread; the event loop goes on until it is answered. */
  request(op: WriterRequest['op'], sql?: string, parameters?: readonly unknown[]): Promise<unknown> {
    if (this.failure) return Promise.reject(new StoreUnavailableError(this.failure))
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      // Keep the process alive while an answer is owed (a command line's last write).
      if (this.waiting.size === 0) this.done.ref()
      this.waiting.set(id, { resolve, reject })
      const transfer: ArrayBuffer[] = []
      this.post({ id, op, sql, parameters: movedParameters(parameters, transfer), answer: 'async' }, transfer)
    })
  }

  /**
   * Queues one request for the writer thread, which nobody waits for and which has no answer.
   * Queued requests leave together, as one message, with the next request that is answered.
   */
  send(op: WriterRequest['op'], sql?: string, parameters?: readonly unknown[]): void {
    if (this.failure) throw new StoreUnavailableError(this.failure)
    this.outbox.push({
      id: 0,
      op,
      sql,
      parameters: movedParameters(parameters, this.outboxTransfer),
      answer: 'none',
    })
  }

  async close(): Promise<void> {
    if (this.checkpointer) {
      const stopped = new Promise((resolve) => this.checkpointer?.once('exit', resolve))
      // Unreferenced while it runs; its end is awaited now, so the process must wait for it.
      this.checkpointer.ref()
      Atomics.store(this.control, 3, 1)
      Atomics.notify(this.control, 2)
      await stopped
      this.checkpointer = undefined
    }
    if (this.failure) return
    const exited = new Promise((resolve) => this.worker.once('exit', resolve))
    this.worker.ref()
    // The thread closes the connection, answers and ends; its end may arrive before its answer.
    const closed = this.request('close').catch(() => undefined)
    this.failure = new Error('the store is closed')
    await Promise.race([closed, exited])
  }

  /**
   * Posts `request` with the outbox before it. The buffers in `transfer` and the outbox's move to
   * the thread: a large text (`Utf8Text`) crosses without a copy, and without the event loop
   * serializing it (a 0.9 MB log entry took about 10 ms to post as a string, bench/README.md).
   */
  private post(request: WriterRequest, transfer: ArrayBuffer[] = []): void {
    let message: WriterRequest | WriterRequest[] = request
    if (this.outbox.length > 0) {
      this.outbox.push(request)
      message = this.outbox
      for (const buffer of transfer)
        if (!this.outboxTransfer.includes(buffer)) this.outboxTransfer.push(buffer)
      transfer = this.outboxTransfer
      this.outbox = []
      this.outboxTransfer = []
    }
    this.requests.postMessage(message, transfer)
    Atomics.add(this.control, 0, 1)
    Atomics.notify(this.control, 0)
  }

  private settle(answer: WriterAnswer): void {
    const waiter = this.waiting.get(answer.id)
    if (!waiter) return
    this.waiting.delete(answer.id)
    if (this.waiting.size === 0) this.done.unref()
    if ('error' in answer) waiter.reject(toError(answer.error))
    else waiter.resolve(answer.value)
  }

  private fail(error: Error): void {
    this.failure ??= error
    error = this.failure
    for (const waiter of this.waiting.values()) waiter.reject(new StoreUnavailableError(error))
    this.waiting.clear()
    this.done.unref()
  }
}

/** Turns taken on the writer's one connection: one transaction or lone statement at a time. */
class Turns {
  private busy = false
  private readonly queue: (() => void)[] = []

  async take(): Promise<void> {
    if (!this.busy) {
      this.busy = true
      return
    }
    await new Promise<void>((resolve) => this.queue.push(resolve))
  }

  give(): void {
    const next = this.queue.shift()
    if (next) next()
    else this.busy = false
  }
}

function toResult<R>(value: unknown): QueryResult<R> {
  if (Array.isArray(value)) return { rows: value as R[] }
  const { changes, lastInsertRowid } = value as { changes: number; lastInsertRowid: number | bigint }
  return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) }
}

class WriterConnection implements DatabaseConnection {
  inTransaction = false

  constructor(
    private readonly writer: SqliteWriter,
    private readonly turns: Turns,
    private readonly reader: DirectConnection | undefined,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.inTransaction) return toResult(this.writer.call('run', query.sql, query.parameters))
    // A read outside a transaction runs on the read connection: it sees every commit this
    // process has acknowledged (withTurnSnapshots) and never waits for the writer.
    if (this.reader && SelectQueryNode.is(query.query))
      return { rows: this.reader.run(query.sql, query.parameters) as R[] }
    await this.turns.take()
    try {
      const value = await this.writer.request('run', query.sql, query.parameters)
      if (!Array.isArray(value)) this.writer.commits++
      return toResult(value)
    } finally {
      this.turns.give()
    }
  }

  // biome-ignore lint/correctness/useYield: nothing is streamed from the store
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported on SQLite')
  }
}

class WriterDriver implements Driver {
  private readonly turns = new Turns()

  constructor(
    private readonly writer: SqliteWriter,
    private readonly reader: DirectConnection | undefined,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new WriterConnection(this.writer, this.turns, this.reader)
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await this.turns.take()
    // Sent without waiting: it leaves with the transaction's first statement. Should it fail (a
    // lock held past the busy timeout), every step of the transaction fails with its error.
    try {
      this.writer.send('begin')
    } catch (error) {
      this.turns.give()
      throw error
    }
    ;(connection as WriterConnection).inTransaction = true
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    // A failed commit leaves the transaction open; Kysely then rolls it back, which ends the turn.
    const failures = await this.writer.request('commit')
    this.writer.commits++
    this.writer.failedSegments = failures as SegmentFailure[]
    this.end(connection)
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await this.writer.request('rollback')
    } finally {
      this.end(connection)
    }
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    await this.writer.close()
  }

  private end(connection: DatabaseConnection): void {
    const writerConnection = connection as WriterConnection
    if (!writerConnection.inTransaction) return
    writerConnection.inTransaction = false
    this.turns.give()
  }
}

/**
 * Kysely's SQLite dialect over the writer thread: transactions and writes go to the writer,
 * reads outside a transaction to `reader` (when there is one: a `:memory:` store has only the
 * writer's connection, and reads there take their turn like writes).
 */
export function writerDialect(writer: SqliteWriter, reader: DirectConnection | undefined): Dialect {
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new WriterDriver(writer, reader),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  }
}

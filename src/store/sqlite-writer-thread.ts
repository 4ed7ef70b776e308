import type { statSync } from 'node:fs'
import type { MessagePort, receiveMessageOnPort } from 'node:worker_threads'
import type BetterSqlite3 from 'better-sqlite3'

/** What the writer thread is started with (its `workerData`). */
export interface WriterThreadData {
  /** The database file, or `:memory:`. */
  path: string
  /** The resolved path of better-sqlite3, which the thread loads itself. */
  sqlite: string
  /**
   * Counters shared with the event loop and the checkpointer: [0] moves when a request has been
   * posted, [1] when the thread has posted the answer to a synchronous one, [2] with every
   * commit; [3] set asks the checkpointer to stop.
   */
  control: SharedArrayBuffer
  /** Requests from the event loop, one or several to a message. */
  requests: MessagePort
  /** Answers to synchronous requests, which the event loop takes with `receiveMessageOnPort`. */
  replies: MessagePort
  /** Answers to asynchronous requests (begin, commit, rollback, a statement on its own). */
  done: MessagePort
}

/** What the checkpointer thread is started with. */
export interface CheckpointerThreadData {
  path: string
  sqlite: string
  /** The writer's counters (`WriterThreadData.control`). */
  control: SharedArrayBuffer
  /** After this many commits the checkpointer checkpoints (PASSIVE). */
  checkpointCommits: number
  /** Past this many bytes of write-ahead log it checkpoints with TRUNCATE. */
  truncateBytes: number
}

/**
 * One request to the writer thread. Inside a transaction, the writes of a group commit are
 * segments: `segment` opens one (a savepoint), `send` runs a statement whose answer nobody waits
 * for, `end` releases the segment and `abort` rolls it back. A sent statement that fails rolls
 * its segment back at once, and every later statement of that segment answers with its error;
 * `commit` answers with the segments that failed so.
 */
export interface WriterRequest {
  id: number
  op:
    | 'open'
    | 'run'
    | 'first'
    | 'column'
    | 'send'
    | 'segment'
    | 'end'
    | 'abort'
    | 'begin'
    | 'commit'
    | 'rollback'
    | 'close'
  sql?: string
  parameters?: readonly unknown[]
  /**
   * `sync`: answered on `replies`; `async`: answered on `done` with the request's id; `none`: not
   * answered (its failure, if any, is its segment's).
   */
  answer: 'sync' | 'async' | 'none'
}

/** A segment that a sent statement failed, as the answer to `commit` lists it. */
export interface SegmentFailure {
  segment: number
  error: { name: string; message: string; code?: unknown }
}

/** The answer to a request: its value, or the error it raised (name, message and code kept). */
export type WriterAnswer =
  | { id: number; value: unknown }
  | { id: number; error: { name: string; message: string; code?: unknown } }

/**
 * The writer thread's program. It owns the store's one write connection: every statement that
 * writes and every commit with its fsync (`synchronous=FULL`) run here, so that none of them
 * holds the event loop (checkpoints run in `checkpointerThread`). The event loop sends BEGIN and
 * a group commit's writes without waiting, waits a few microseconds for a statement whose answer
 * it needs (a read inside a transaction), and awaits COMMIT without blocking
 * (bench/sqlite-writer.mjs).
 *
 * Self-contained by design: its source text is the thread's program (see `sqlite-writer.ts`), so
 * it uses nothing but its arguments, and runs the same from the TypeScript under test, from the
 * compiled output and from the bundle.
 */
export function writerThread(
  data: WriterThreadData,
  receive: typeof receiveMessageOnPort,
  SQLite: typeof BetterSqlite3,
): void {
  const control = new Int32Array(data.control)
  let db: BetterSqlite3.Database | undefined
  const statements = new Map<string, BetterSqlite3.Statement>()
  /** The open segment of the transaction (-1: none yet), and the error that failed it. */
  let segment = -1
  let segmentError: Error | undefined
  let failures: SegmentFailure[] = []
  /** The error of a BEGIN that failed, until the rollback that ends its transaction. */
  let beginError: Error | undefined

  const connection = (): BetterSqlite3.Database => {
    if (!db) throw new Error('the store is not open')
    return db
  }
  const prepare = (sql: string, pluck: boolean): BetterSqlite3.Statement => {
    const key = pluck ? `column\0${sql}` : sql
    let statement = statements.get(key)
    if (!statement) {
      if (statements.size >= 2000) statements.clear()
      statement = connection().prepare(sql)
      if (pluck) statement.pluck()
      statements.set(key, statement)
    }
    return statement
  }
  const committed = (): void => {
    Atomics.add(control, 2, 1)
    Atomics.notify(control, 2)
  }
  const describe = (error: unknown): SegmentFailure['error'] => {
    const { name, message, code } = error as Error & { code?: unknown }
    return { name, message, code }
  }
  const execute = (request: WriterRequest): unknown => {
    const parameters = request.parameters ?? []
    // A transaction whose BEGIN failed (it is sent without waiting) fails every step up to its
    // rollback with that error: nothing of it may run outside a transaction.
    if (beginError) {
      if (request.op === 'rollback') {
        beginError = undefined
        return null
      }
      if (request.op !== 'open' && request.op !== 'close') throw beginError
    }
    // A statement of a failed segment answers with the error that failed it.
    if (segmentError && (request.op === 'run' || request.op === 'first' || request.op === 'column'))
      throw segmentError
    switch (request.op) {
      case 'open': {
        db = new SQLite(data.path)
        // WAL with synchronous=FULL: a commit is on disk before it returns, so a 201 is never
        // lost. The checkpointer thread checkpoints, never the committing call.
        db.pragma('journal_mode = WAL')
        db.pragma('synchronous = FULL')
        db.pragma('foreign_keys = ON')
        db.pragma('busy_timeout = 5000')
        db.pragma('wal_autocheckpoint = 0')
        return null
      }
      case 'run': {
        const statement = prepare(request.sql ?? '', false)
        if (statement.reader) return statement.all(...parameters)
        const { changes, lastInsertRowid } = statement.run(...parameters)
        if (!connection().inTransaction) committed()
        return { changes, lastInsertRowid }
      }
      case 'first':
        return prepare(request.sql ?? '', false).get(...parameters)
      case 'column':
        return prepare(request.sql ?? '', true).all(...parameters)
      case 'send': {
        if (segmentError) return null
        try {
          prepare(request.sql ?? '', false).run(...parameters)
        } catch (error) {
          segmentError = error as Error
          failures.push({ segment, error: describe(error) })
          prepare('rollback to w', false).run()
          prepare('release w', false).run()
        }
        return null
      }
      case 'segment':
        segment++
        segmentError = undefined
        prepare('savepoint w', false).run()
        return null
      case 'end':
      case 'abort':
        if (!segmentError) {
          if (request.op === 'abort') prepare('rollback to w', false).run()
          prepare('release w', false).run()
        }
        segmentError = undefined
        return null
      case 'begin':
        segment = -1
        segmentError = undefined
        failures = []
        try {
          prepare('begin immediate', false).run()
        } catch (error) {
          beginError = error as Error
          throw error
        }
        return null
      case 'commit':
        prepare('commit', false).run()
        committed()
        return failures
      case 'rollback':
        if (connection().inTransaction) prepare('rollback', false).run()
        return null
      case 'close':
        if (db?.inTransaction) db.prepare('rollback').run()
        statements.clear()
        db?.close()
        db = undefined
        return null
    }
  }

  for (;;) {
    const seen = Atomics.load(control, 0)
    const received = receive(data.requests)
    if (!received) {
      Atomics.wait(control, 0, seen)
      continue
    }
    const message = received.message as WriterRequest | WriterRequest[]
    for (const request of Array.isArray(message) ? message : [message]) {
      let answer: WriterAnswer
      try {
        answer = { id: request.id, value: execute(request) }
      } catch (error) {
        answer = { id: request.id, error: describe(error) }
      }
      if (request.answer === 'sync') {
        data.replies.postMessage(answer)
        Atomics.add(control, 1, 1)
        Atomics.notify(control, 1)
      } else if (request.answer === 'async') {
        data.done.postMessage(answer)
      } else if ('error' in answer && request.op !== 'begin' && !beginError) {
        // A segment step that failed (it never should): the segment fails with it.
        failures.push({ segment, error: answer.error })
      }
      if (request.op === 'close') return
    }
  }
}

/**
 * The checkpointer thread's program, self-contained like `writerThread`. On a connection of its
 * own it copies the write-ahead log back into the database (PASSIVE: never waiting for, nor
 * holding up, the writer or readers) every `checkpointCommits` commits, or after 50 ms without
 * one, and truncates the log (TRUNCATE) once it outgrows `truncateBytes`. So neither the event
 * loop nor a commit ever waits for a checkpoint.
 */
export function checkpointerThread(
  data: CheckpointerThreadData,
  SQLite: typeof BetterSqlite3,
  stat: typeof statSync,
): void {
  const IDLE_MS = 50
  const control = new Int32Array(data.control)
  const db = new SQLite(data.path)
  db.pragma('busy_timeout = 5000')
  db.pragma('wal_autocheckpoint = 0')
  // Commits the last checkpoint covered. -1: none yet, so the log is checkpointed once at start
  // (what an earlier run left in it, and the commits made while this thread was starting).
  let checkpointed = -1
  const checkpoint = (): void => {
    checkpointed = Atomics.load(control, 2)
    try {
      db.pragma('wal_checkpoint(PASSIVE)')
      if (stat(`${data.path}-wal`).size > data.truncateBytes) db.pragma('wal_checkpoint(TRUNCATE)')
    } catch {
      // A checkpoint that cannot finish now (a reader on an old snapshot, a lock) runs later.
    }
  }
  while (Atomics.load(control, 3) === 0) {
    const commits = Atomics.load(control, 2)
    if (commits - checkpointed >= data.checkpointCommits) {
      checkpoint()
      continue
    }
    const waited = Atomics.wait(control, 2, commits, commits !== checkpointed ? IDLE_MS : undefined)
    if (waited === 'timed-out' && Atomics.load(control, 3) === 0) checkpoint()
  }
  db.close()
}

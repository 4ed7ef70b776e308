// @ts-check
// JavaScript, type-checked from its JSDoc: a worker thread's entry is a file Node loads as it is,
// and Node 20 loads no TypeScript. So the same file runs under the tests (from src/), from tsc's
// output (dist/store/) and beside the bundle (dist/, scripts/bundle.mjs).
import { receiveMessageOnPort, workerData } from 'node:worker_threads'
import SQLite from 'better-sqlite3'

/**
 * @typedef {import('./sqlite-writer-protocol.js').WriterThreadData} WriterThreadData
 * @typedef {import('./sqlite-writer-protocol.js').WriterRequest} WriterRequest
 * @typedef {import('./sqlite-writer-protocol.js').WriterAnswer} WriterAnswer
 * @typedef {import('./sqlite-writer-protocol.js').SegmentFailure} SegmentFailure
 */

/** Most statements kept prepared; the writes Warden makes have far fewer shapes. */
const STATEMENT_CACHE_SIZE = 2000

/**
 * The writer thread. It owns the store's one write connection: every statement that writes and
 * every commit with its fsync (`synchronous=FULL`) run here, so that none of them holds the event
 * loop (checkpoints run in `sqlite-checkpointer-thread.js`). The event loop (`SqliteWriter` in
 * `sqlite-writer.ts`) sends BEGIN and a group commit's writes without waiting, waits a few
 * microseconds for a statement whose answer it needs (a read inside a transaction), and awaits
 * COMMIT without blocking (bench/sqlite-writer.mjs).
 *
 * @param {WriterThreadData} data
 */
function writerThread(data) {
  const control = new Int32Array(data.control)
  /** @type {SQLite.Database | undefined} */
  let db
  /** @type {Map<string, SQLite.Statement>} */
  const statements = new Map()
  /** The open segment of the transaction (-1: none yet), and the error that failed it. */
  let segment = -1
  /** @type {Error | undefined} */
  let segmentError
  /** @type {SegmentFailure[]} */
  let failures = []
  /** @type {Error | undefined} The error of a BEGIN that failed, until the rollback that ends its transaction. */
  let beginError

  /** @returns {SQLite.Database} */
  const connection = () => {
    if (!db) throw new Error('the store is not open')
    return db
  }
  /**
   * @param {string} sql
   * @param {boolean} pluck
   * @returns {SQLite.Statement}
   */
  const prepare = (sql, pluck) => {
    const key = pluck ? `column\0${sql}` : sql
    let statement = statements.get(key)
    if (!statement) {
      if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear()
      statement = connection().prepare(sql)
      if (pluck) statement.pluck()
      statements.set(key, statement)
    }
    return statement
  }
  const committed = () => {
    Atomics.add(control, 2, 1)
    Atomics.notify(control, 2)
  }
  /**
   * @param {unknown} error
   * @returns {SegmentFailure['error']}
   */
  const describe = (error) => {
    const { name, message, code } = /** @type {Error & { code?: unknown }} */ (error)
    return { name, message, code }
  }
  /**
   * @param {WriterRequest} request
   * @returns {unknown}
   */
  const execute = (request) => {
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
          segmentError = /** @type {Error} */ (error)
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
          beginError = /** @type {Error} */ (error)
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
    const received = receiveMessageOnPort(data.requests)
    if (!received) {
      Atomics.wait(control, 0, seen)
      continue
    }
    const message = /** @type {WriterRequest | WriterRequest[]} */ (received.message)
    for (const request of Array.isArray(message) ? message : [message]) {
      /** @type {WriterAnswer} */
      let answer
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

writerThread(/** @type {WriterThreadData} */ (workerData))

// @ts-check
// JavaScript, type-checked from its JSDoc, for the reason `sqlite-writer-thread.js` gives.
import { statSync } from 'node:fs'
import { workerData } from 'node:worker_threads'
import SQLite from 'better-sqlite3'

/** @typedef {import('./sqlite-writer-protocol.js').CheckpointerThreadData} CheckpointerThreadData */

/** After this long without a commit, the log is checkpointed anyway. */
const IDLE_MS = 50

/**
 * The checkpointer thread. On a connection of its own it copies the write-ahead log back into the
 * database (PASSIVE: never waiting for, nor holding up, the writer or readers) every
 * `checkpointCommits` commits, or after IDLE_MS without one, and truncates the log (TRUNCATE)
 * once it outgrows `truncateBytes`. So neither the event loop nor a commit ever waits for a
 * checkpoint.
 *
 * @param {CheckpointerThreadData} data
 */
function checkpointerThread(data) {
  const control = new Int32Array(data.control)
  const db = new SQLite(data.path)
  db.pragma('busy_timeout = 5000')
  db.pragma('wal_autocheckpoint = 0')
  // Commits the last checkpoint covered. -1: none yet, so the log is checkpointed once at start
  // (what an earlier run left in it, and the commits made while this thread was starting).
  let checkpointed = -1
  const checkpoint = () => {
    checkpointed = Atomics.load(control, 2)
    try {
      db.pragma('wal_checkpoint(PASSIVE)')
      if (statSync(`${data.path}-wal`).size > data.truncateBytes) db.pragma('wal_checkpoint(TRUNCATE)')
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

checkpointerThread(/** @type {CheckpointerThreadData} */ (workerData))

import type { Kysely } from 'kysely'
import type { DialectName } from './dialect.js'
import { type SqliteWriter, toError } from './sqlite-writer.js'
import { directStatements, type Statements } from './statements.js'

/**
 * What a write in a group commit runs on: Kysely's transaction, and the statements of the fast
 * path on the writer thread's connection that holds it (sent without waiting).
 */
export interface GroupTransaction<DB> {
  readonly db: Kysely<DB>
  readonly dialect: DialectName
  readonly statements: Statements
}

type Write<DB, T> = (tx: GroupTransaction<DB>) => Promise<T>

interface Pending<DB> {
  write: Write<DB, unknown>
  resolve(value: unknown): void
  reject(error: unknown): void
}

type Outcome = { value: unknown } | { error: unknown }

/** The most writes one commit carries; a longer queue is drained in several commits. */
const MAX_BATCH = 256

/**
 * Group commit for SQLite. With `synchronous=FULL` every commit waits for an fsync (a quarter of
 * a millisecond to tens of milliseconds here, in the writer thread: `sqlite-writer.ts`), so one
 * commit per request caps writes at a few thousand a second. Writes that arrive together instead share one transaction
 * and one fsync: each runs inside its own savepoint, so a write that fails (a duplicate id, a
 * failed precondition) is rolled back alone and its caller gets its error, while the others
 * commit. No caller hears of success before the commit that holds its write is on disk. The
 * writes that arrive while a commit is on its way to disk form the next one.
 */
export class GroupCommit<DB> {
  private queue: Pending<DB>[] = []
  private scheduled = false
  /** The writes' statements, on the writer's connection (the one a transaction of `db` holds). */
  private readonly statements: Statements

  /** `db` runs its transactions on `writer`, whose segments carry the writes. */
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: DialectName,
    private readonly writer: SqliteWriter,
  ) {
    this.statements = directStatements(writer.direct)
  }

  run<T>(write: Write<DB, T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject })
      if (!this.scheduled) {
        this.scheduled = true
        // Wait for the writes of requests already being handled in this turn of the event loop.
        setImmediate(() => void this.flush())
      }
    })
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0, MAX_BATCH)
    const outcomes: Outcome[] = []
    try {
      await this.db.transaction().execute(async (trx) => {
        const tx: GroupTransaction<DB> = { db: trx, dialect: this.dialect, statements: this.statements }
        for (const pending of batch) {
          this.writer.send('segment')
          try {
            outcomes.push({ value: await pending.write(tx) })
            this.writer.send('end')
          } catch (error) {
            this.writer.send('abort')
            outcomes.push({ error })
          }
        }
        // The writes' statements leave as one message with the commit: one wake of the thread.
      })
      // Writes whose sent statements failed were rolled back alone, in the writer thread.
      for (const { segment, error } of this.writer.failedSegments)
        outcomes[segment] = { error: toError(error) }
      batch.forEach((pending, i) => {
        const outcome = outcomes[i] as Outcome
        if ('error' in outcome) pending.reject(outcome.error)
        else pending.resolve(outcome.value)
      })
    } catch (error) {
      // The commit itself failed: nothing in this batch is on disk.
      for (const pending of batch) pending.reject(error)
    }
    if (this.queue.length > 0) setImmediate(() => void this.flush())
    else this.scheduled = false
  }
}

import { CompiledQuery, type Kysely } from 'kysely'
import { type DirectConnection, runPreparedQueriesOn, runStatement } from './prepared-queries.js'

type Write<DB, T> = (db: Kysely<DB>) => Promise<T>

interface Pending<DB> {
  write: Write<DB, unknown>
  resolve(value: unknown): void
  reject(error: unknown): void
}

const SAVEPOINT = CompiledQuery.raw('savepoint w')
const RELEASE = CompiledQuery.raw('release w')
const ROLLBACK_TO = CompiledQuery.raw('rollback to w')

/** The most writes one commit carries; a longer queue is drained in several commits. */
const MAX_BATCH = 256

/**
 * Group commit for SQLite. With `synchronous=FULL` every commit waits for an fsync (about a
 * quarter of a millisecond here, with the event loop blocked), so one commit per request caps
 * writes at a few thousand a second. Writes that arrive together instead share one transaction
 * and one fsync: each runs inside its own savepoint, so a write that fails (a duplicate id, a
 * failed precondition) is rolled back alone and its caller gets its error, while the others
 * commit. No caller hears of success before the commit that holds its write is on disk.
 */
export class GroupCommit<DB> {
  private queue: Pending<DB>[] = []
  private scheduled = false
  /** Commits made and writes they carried, for tests and benchmarks. */
  readonly stats = { commits: 0, writes: 0 }

  /**
   * With `connection` (the connection `db` writes on), the savepoints and the compiled statements
   * of the writes run on it directly rather than through Kysely's executor.
   */
  constructor(
    private readonly db: Kysely<DB>,
    private readonly connection?: DirectConnection,
  ) {}

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
    const settle: (() => void)[] = []
    try {
      await this.db.transaction().execute(async (trx) => {
        if (this.connection) runPreparedQueriesOn(trx, this.connection, true)
        for (const pending of batch) {
          await runStatement(trx, SAVEPOINT)
          try {
            const value = await pending.write(trx)
            await runStatement(trx, RELEASE)
            settle.push(() => pending.resolve(value))
          } catch (error) {
            await runStatement(trx, ROLLBACK_TO)
            await runStatement(trx, RELEASE)
            settle.push(() => pending.reject(error))
          }
        }
      })
      this.stats.commits++
      this.stats.writes += batch.length
      for (const done of settle) done()
    } catch (error) {
      // The commit itself failed: nothing in this batch is on disk.
      for (const pending of batch) pending.reject(error)
    }
    if (this.queue.length > 0) setImmediate(() => void this.flush())
    else this.scheduled = false
  }
}

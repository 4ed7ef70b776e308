import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'
import type Pg from 'pg'
import { isStalePlan } from './dialect.js'
import { StoreUnavailableError } from './errors.js'
import { statementName } from './statements.js'

/**
 * A pool for Kysely's PostgresDialect whose clients run the statements of the store's fast path
 * (statements.ts: the point reads, list pages and inserts of the request path, each of whose
 * texts begins with its name) as named statements. pg parses and PostgreSQL plans an unnamed statement on every run, which costs
 * more than running one of these (planning 0.03–0.08 ms against 0.01–0.07 ms of execution;
 * bench/README.md); a named one is parsed once per connection, and after five runs PostgreSQL
 * keeps a generic plan for it. Every other statement runs unnamed.
 */
export function withNamedStatements(pool: Pg.Pool): PostgresPool {
  const clients = new WeakMap<Pg.PoolClient, NamedStatementClient>()
  return {
    async connect() {
      const client = await pool.connect()
      // Kysely keeps one connection object per client it is handed: hand it the same one.
      let named = clients.get(client)
      if (!named) {
        named = new NamedStatementClient(client)
        clients.set(client, named)
      }
      return named
    },
    end: () => pool.end(),
  }
}

class NamedStatementClient implements PostgresPoolClient {
  /** Whether the connection holds a statement that can no longer run: it is closed on release. */
  private stale = false

  constructor(private readonly client: Pg.PoolClient) {}

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>
  query<R>(
    query: string | PostgresCursor<R>,
    parameters?: ReadonlyArray<unknown>,
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    const client = this.client as unknown as PostgresPoolClient
    if (typeof query !== 'string') return client.query(query)
    const values = parameters ?? []
    const name = statementName(query)
    if (name === undefined) return client.query<R>(query, values)
    return this.runNamed(name, query, values) as Promise<PostgresQueryResult<R>>
  }

  private async runNamed(
    name: string,
    text: string,
    values: ReadonlyArray<unknown>,
  ): Promise<PostgresQueryResult<unknown>> {
    try {
      return (await this.client.query({
        name,
        text,
        values: values as unknown[],
      })) as PostgresQueryResult<unknown>
    } catch (error) {
      // A migration run by another instance changed a table that a `select *` statement reads:
      // PostgreSQL refuses to run it with its new columns. Statements prepared on this
      // connection may be stale, so it is closed on release; the query runs once more unnamed,
      // or, inside a transaction that the error aborted, the request answers 503 to be retried.
      if (!isStalePlan(error)) throw error
      this.stale = true
      if (this.client.getTransactionStatus() !== 'I') throw new StoreUnavailableError(error)
      return (await this.client.query(text, values as unknown[])) as PostgresQueryResult<unknown>
    }
  }

  release(): void {
    this.client.release(this.stale)
  }
}

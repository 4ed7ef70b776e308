import { mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, PostgresDialect, sql } from 'kysely'
import type Pg from 'pg'
import { DEFAULT_WAL_TRUNCATE_BYTES, type StoreConfig } from '../config.js'
import type { DialectName } from './dialect.js'
import { rethrowStoreError, withOutageErrors } from './errors.js'
import { GroupCommit } from './group-commit.js'
import { withNamedStatements } from './pg-named-statements.js'
import { SqliteWriter, writerDialect } from './sqlite-writer.js'
import { type DirectConnection, directStatements, kyselyStatements, type Statements } from './statements.js'
import type { Database } from './tables.js'

/** What a write runs on: Kysely for the queries it builds, and the statements of the fast path. */
export interface StoreTransaction {
  readonly db: Kysely<Database>
  readonly dialect: DialectName
  /** On SQLite, the writer thread's connection that holds the group commit (statements.ts). */
  readonly statements: Statements
}

export interface Store {
  /** Kysely, for the queries built per call. Reads outside a write run on the read side. */
  readonly db: Kysely<Database>
  readonly dialect: DialectName
  /**
   * The fast path (statements.ts): on SQLite the read-only connection, run synchronously inside
   * this turn's read snapshot (`withTurnSnapshots`), a write given to it running alone on the
   * writer; on PostgreSQL the pool, as named statements.
   */
  readonly statements: Statements
  /**
   * Runs a write atomically: on SQLite grouped with the writes that arrive with it into one
   * commit, on PostgreSQL in a transaction of its own. Resolves once the write is durable.
   */
  write<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T>
  /**
   * Runs a write that is exactly one statement, atomic by itself: on SQLite grouped like
   * `write`, on PostgreSQL alone, without the BEGIN and COMMIT round trips of a transaction.
   */
  writeOne<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T>
  /** Resolves when the store answers a trivial query. */
  ping(): Promise<void>
  close(): Promise<void>
}

/** pg is loaded only for a PostgreSQL store: the default SQLite start-up does not pay for it. */
const loadPg = (): typeof Pg => createRequire(import.meta.url)('pg')

// int8 (bigint) and numeric columns come back from pg as strings by default; every integer we
// store is far below 2^53, so plain numbers are exact.
const pgTypes = (pg: typeof Pg) => ({
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number(value)
    return pg.types.getTypeParser(oid, format)
  },
})

/** Most distinct statements kept prepared; the queries Warden builds have far fewer shapes. */
const STATEMENT_CACHE_SIZE = 2000

/**
 * Preparing costs more than running a point query, and query shapes repeat: keep each prepared
 * statement of the read connection by its SQL text and reuse it.
 */
function withStatementCache(database: SQLite.Database) {
  const statements = new Map<string, SQLite.Statement>()
  const prepare = (text: string, pluck = false) => {
    const key = pluck ? `column\0${text}` : text
    let statement = statements.get(key)
    if (!statement) {
      if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear()
      statement = database.prepare(text)
      if (pluck) statement.pluck()
      statements.set(key, statement)
    }
    return statement
  }
  const inTransaction = database.transaction((read: () => unknown) => read())
  /** Runs statements on this connection without Kysely (statements.ts). */
  // An outage (a full disk, an I/O error, a lock held past the busy timeout) is raised as the
  // store's own StoreUnavailableError; every other error passes through as it is.
  const direct: DirectConnection = {
    run(text, parameters) {
      try {
        const statement = prepare(text)
        if (statement.reader) return statement.all(...parameters)
        statement.run(...parameters)
        return []
      } catch (error) {
        rethrowStoreError(error)
      }
    },
    first(text, parameters) {
      try {
        return prepare(text).get(...parameters)
      } catch (error) {
        rethrowStoreError(error)
      }
    },
    column(text, parameters) {
      try {
        return prepare(text, true).all(...parameters)
      } catch (error) {
        rethrowStoreError(error)
      }
    },
    snapshot<T>(read: () => T): T {
      try {
        return inTransaction(read) as T
      } catch (error) {
        rethrowStoreError(error)
      }
    },
  }
  return { direct }
}

/**
 * Reads on a read-only connection that arrive in the same turn of the event loop share one read
 * transaction, instead of each taking and releasing the WAL's read lock (two system calls and a
 * check of the WAL index per read). The transaction ends when the turn does, and before the next
 * read whenever `commits` has moved on, that is, whenever the writer has committed: a read never
 * misses a write this process has acknowledged. A commit by another
 * process is seen from the next turn on.
 */
export function withTurnSnapshots(database: SQLite.Database, commits: () => number) {
  const cached = withStatementCache(database)
  const begin = database.prepare('begin')
  const commit = database.prepare('commit')
  let open = false
  let takenAt = 0
  let endScheduled = false
  const end = () => {
    if (!open) return
    open = false
    commit.run()
  }
  const endOfTurn = () => {
    endScheduled = false
    end()
  }
  const ensure = () => {
    const now = commits()
    if (open) {
      if (now === takenAt) return
      end()
    }
    begin.run()
    open = true
    takenAt = now
    if (!endScheduled) {
      endScheduled = true
      setImmediate(endOfTurn)
    }
  }
  const direct: DirectConnection = {
    run(text, parameters) {
      ensure()
      return cached.direct.run(text, parameters)
    },
    first(text, parameters) {
      ensure()
      return cached.direct.first(text, parameters)
    },
    column(text, parameters) {
      ensure()
      return cached.direct.column(text, parameters)
    },
    snapshot<T>(read: () => T): T {
      ensure()
      return read()
    },
  }
  return {
    direct,
    close() {
      end()
      database.close()
    },
  }
}

function openSqlite(config: Extract<StoreConfig, { kind: 'sqlite' }>): Store {
  const { path } = config
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  // The write connection lives in a thread of its own, which commits (WAL, synchronous=FULL: a
  // commit is on disk before it is acknowledged) and checkpoints without holding the event loop.
  const writer = new SqliteWriter(path, {
    walTruncateBytes: config.walTruncateBytes ?? DEFAULT_WAL_TRUNCATE_BYTES,
  })
  // Reads outside transactions use a read-only connection of their own: in WAL mode it sees
  // every committed write and nothing of a commit still in progress on the write connection,
  // and it never waits behind one. Reads in one turn of the event loop share its snapshot.
  let reader: ReturnType<typeof withTurnSnapshots> | undefined
  if (path !== ':memory:') {
    const connection = new SQLite(path, { readonly: true })
    connection.pragma('busy_timeout = 5000')
    reader = withTurnSnapshots(connection, () => writer.commits)
  }
  const db = new Kysely<Database>({ dialect: withOutageErrors(writerDialect(writer, reader?.direct)) })
  const throughKysely = kyselyStatements(db, 'sqlite')
  const groupCommit = new GroupCommit(db, 'sqlite', writer)
  return {
    db,
    dialect: 'sqlite',
    // A `:memory:` store has no read connection: its reads take their turn on the writer.
    statements: reader ? directStatements(reader.direct, throughKysely) : throughKysely,
    write: (fn) => groupCommit.run(fn),
    writeOne: (fn) => groupCommit.run(fn),
    async ping() {
      await sql`select 1`.execute(db)
    },
    async close() {
      reader?.close()
      await db.destroy()
    },
  }
}

function openPostgres(config: Extract<StoreConfig, { kind: 'postgres' }>): Store {
  // Keep any `options` the URL carries (such as a search_path) and add ours after them.
  const fromUrl = new URL(config.url).searchParams.get('options')
  const options: string[] = fromUrl ? [fromUrl] : []
  if (config.statementTimeoutMs > 0) options.push(`-c statement_timeout=${config.statementTimeoutMs}`)
  if (config.schema) options.push(`-c search_path=${config.schema}`)
  const pg = loadPg()
  const pool = new pg.Pool({
    connectionString: config.url,
    max: config.poolSize,
    // Bound every wait: a request never hangs on an unreachable database.
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30_000,
    types: pgTypes(pg),
    ...(options.length > 0 ? { options: options.join(' ') } : {}),
  })
  // A client losing its connection (the database stopped or restarted) must not crash the
  // process: idle ones report on the pool, checked-out ones on themselves. The failed query
  // answers 503 and the pool opens a new connection for the next one.
  pool.on('error', () => {})
  pool.on('connect', (client) => {
    client.on('error', () => {})
  })
  const db = new Kysely<Database>({
    dialect: withOutageErrors(new PostgresDialect({ pool: withNamedStatements(pool) })),
  })
  const statements = kyselyStatements(db, 'postgres')
  return {
    db,
    dialect: 'postgres',
    statements,
    write: (fn) =>
      db
        .transaction()
        .execute((trx) =>
          fn({ db: trx, dialect: 'postgres', statements: kyselyStatements(trx, 'postgres') }),
        ),
    writeOne: (fn) => fn({ db, dialect: 'postgres', statements }),
    async ping() {
      await sql`select 1`.execute(db)
    },
    async close() {
      await db.destroy()
    },
  }
}

/** Opens the store that the configuration names. */
export function openStore(config: StoreConfig): Store {
  return config.kind === 'sqlite' ? openSqlite(config) : openPostgres(config)
}

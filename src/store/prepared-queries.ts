import { CompiledQuery, type Kysely } from 'kysely'

/**
 * Hot queries, built and compiled by Kysely once per dialect and then run by their SQL text with
 * positional parameters: Kysely builds and compiles every query it runs, which profiling showed
 * at about 15% of a point read. On SQLite they run on a connection directly, synchronously.
 */

/** A SQLite connection that prepared queries run on synchronously; see `runPreparedQueriesOn`. */
export interface DirectConnection {
  /** Runs one statement and returns its rows (none for a statement that returns no data). */
  run(sql: string, parameters: readonly unknown[]): unknown[]
  /** Runs a query and returns its first row, without stepping further (a point read). */
  first(sql: string, parameters: readonly unknown[]): unknown
  /** Runs a query and returns the first column of each row, without building a row object. */
  column(sql: string, parameters: readonly unknown[]): unknown[]
  /** Runs `read` in one read transaction, so that all its queries see the same data. */
  snapshot<T>(read: () => T): T
  /**
   * Runs a write without waiting for it, where the connection allows (the SQLite writer thread,
   * inside a group commit): its failure fails the write it belongs to when the group commits
   * (`GroupCommit`), not at this call.
   */
  send?(sql: string, parameters: readonly unknown[]): void
}

/** Where compiled reads run directly, and where writes do too. */
const readers = new WeakMap<object, DirectConnection>()
const writers = new WeakMap<object, DirectConnection>()

/**
 * Lets the compiled statements run on `db` bypass Kysely's executor (about 3 µs a statement) and
 * run on `connection` instead. For the store's `db` on SQLite that is the read connection: reads
 * outside transactions see committed data only, and writes still go through Kysely. For a group
 * commit's transaction (`writes`), it is the connection that holds the transaction.
 */
export function runPreparedQueriesOn<DB>(db: Kysely<DB>, connection: DirectConnection, writes = false): void {
  readers.set(db, connection)
  if (writes) writers.set(db, connection)
}

/** A query compiled once: its SQL text and how many positional parameters it takes. */
interface Prepared {
  sql: string
  parameters: number
}

/** Prepared queries per dialect (keyed by the adapter's class) and query name. */
const prepared = new WeakMap<object, Map<string, Prepared>>()

/** The name of each prepared query's SQL text (of every dialect). */
const names = new Map<string, string>()

/**
 * The name of the prepared query whose SQL text this is, or undefined for any other statement:
 * on PostgreSQL such a query runs as a statement of that name (pg-named-statements.ts).
 */
export function preparedQueryName(sql: string): string | undefined {
  return names.get(sql)
}

/**
 * Runs a hot point read without rebuilding it and returns its first row: Kysely builds and
 * compiles every query it runs, which profiling showed at about 15% of a point read. The query is
 * built and compiled once per dialect (with placeholder values) and then run with `parameters`,
 * which must follow the order in which the built query uses its values. On SQLite it runs
 * directly on its connection (`runPreparedQueriesOn`) and stops at the first row.
 */
export async function findPrepared<DB, R>(
  db: Kysely<DB>,
  name: string,
  build: () => { compile(): CompiledQuery<R> },
  parameters: readonly unknown[],
): Promise<R | undefined> {
  const text = preparedText(db, name, build, parameters.length)
  const connection = readers.get(db)
  if (connection) return connection.first(text, parameters) as R | undefined
  const result = await db.executeQuery<R>(CompiledQuery.raw(text, [...parameters]))
  return result.rows[0]
}

/** Runs a hot query built once per dialect, like `findPrepared`, and returns all its rows. */
export async function allPrepared<DB, R>(
  db: Kysely<DB>,
  name: string,
  build: () => { compile(): CompiledQuery<R> },
  parameters: readonly unknown[],
): Promise<R[]> {
  const text = preparedText(db, name, build, parameters.length)
  const connection = readers.get(db)
  if (connection) return connection.run(text, parameters) as R[]
  const result = await db.executeQuery<R>(CompiledQuery.raw(text, [...parameters]))
  return result.rows
}

/**
 * Inserts one row with a statement built once per dialect and table: `columns` name the values
 * to take from `row`, in order (an absent one is NULL).
 */
export async function runInsert<DB>(
  db: Kysely<DB>,
  table: keyof DB & string,
  columns: readonly string[],
  row: Readonly<Record<string, unknown>>,
): Promise<void> {
  const build = () =>
    db.insertInto(table).values(Object.fromEntries(columns.map((column) => [column, null])) as never)
  const values = columns.map((column) => row[column] ?? null)
  const text = preparedText(db, `insert ${table}`, build, values.length)
  await runStatement(db, CompiledQuery.raw(text, values))
}

/**
 * Runs a write given as SQL text, directly where `runPreparedQueriesOn` allows. Inside a group
 * commit on SQLite it is sent without waiting: a failure (a duplicate key, a missing parent)
 * fails the write when the group commits, so callers map such errors where they call
 * `Store.write`, not inside the write.
 */
export async function runStatement<DB>(db: Kysely<DB>, statement: CompiledQuery): Promise<void> {
  const connection = writers.get(db)
  if (connection?.send) connection.send(statement.sql, statement.parameters)
  else if (connection) connection.run(statement.sql, statement.parameters)
  else await db.executeQuery(statement)
}

/** A query over `seq` and `doc` columns, in `seq` order, that a page can be cut from. */
interface PageQuery {
  limit(limit: number): PageQuery
  offset(offset: number): PageQuery
  compile(): CompiledQuery<unknown>
}

/** Up to `limit` stored documents and, when more follow, the position of the last one. */
export interface DocumentPage {
  docs: string[]
  last: number | null
}

/**
 * Reads one page of stored documents. `query(columns)` selects those columns, filtered by
 * `parameters` (in the order the query uses them) and ordered by `seq`. On SQLite's read
 * connection the page is read as plain strings, without a row object each (row objects were
 * half the cost of a page of 50), and the position of the last one by a second query in the
 * same read transaction; elsewhere one query reads `seq` and `doc` for `limit + 1` rows.
 */
export async function runDocumentPage<DB>(
  db: Kysely<DB>,
  name: string,
  query: (columns: readonly ('seq' | 'doc')[]) => PageQuery,
  parameters: readonly unknown[],
  limit: number,
): Promise<DocumentPage> {
  const connection = readers.get(db)
  if (!connection) {
    const text = preparedText(db, name, () => query(['seq', 'doc']).limit(1), parameters.length + 1)
    const { rows } = await db.executeQuery<{ seq: number; doc: string }>(
      CompiledQuery.raw(text, [...parameters, limit + 1]),
    )
    const more = rows.length > limit
    const page = more ? rows.slice(0, limit) : rows
    return { docs: page.map((row) => row.doc), last: more ? (page[page.length - 1]?.seq ?? null) : null }
  }
  const docsText = preparedText(db, `${name} documents`, () => query(['doc']).limit(1), parameters.length + 1)
  const lastText = preparedText(
    db,
    `${name} last`,
    () => query(['seq']).limit(1).offset(1),
    parameters.length + 2,
  )
  return connection.snapshot(() => {
    const docs = connection.column(docsText, [...parameters, limit + 1]) as string[]
    if (docs.length <= limit) return { docs, last: null }
    docs.pop()
    const [last] = connection.column(lastText, [...parameters, 1, limit - 1]) as number[]
    return { docs, last: last ?? null }
  })
}

/**
 * The SQL text of a prepared query, compiling it on first use. `parameters` is the number of
 * positional values the caller passes: it must be the number the compiled query takes, or a
 * missing or extra value would silently shift the others (and read the wrong row). The count is
 * checked on every run; it is one integer comparison.
 */
function preparedText<DB>(
  db: Kysely<DB>,
  name: string,
  build: () => { compile(): CompiledQuery<unknown> },
  parameters: number,
): string {
  const dialect = db.getExecutor().adapter.constructor
  let byName = prepared.get(dialect)
  if (!byName) {
    byName = new Map()
    prepared.set(dialect, byName)
  }
  let query = byName.get(name)
  if (query === undefined) {
    const compiled = build().compile()
    query = { sql: compiled.sql, parameters: compiled.parameters.length }
    byName.set(name, query)
    // Two queries of the same text share the name of the first: one statement per connection.
    if (!names.has(query.sql)) names.set(query.sql, name)
  }
  if (query.parameters !== parameters) {
    throw new Error(`prepared query "${name}" takes ${query.parameters} parameters; ${parameters} were given`)
  }
  return query.sql
}

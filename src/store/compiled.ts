import { CompiledQuery, type Kysely } from 'kysely'

/**
 * Runs one statement synchronously on a SQLite connection and returns its rows (none for a
 * statement that returns no data); see `runDirectly`.
 */
export type DirectConnection = (sql: string, parameters: readonly unknown[]) => unknown[]

/** Where compiled reads run directly, and where writes do too. */
const readers = new WeakMap<object, DirectConnection>()
const writers = new WeakMap<object, DirectConnection>()

/**
 * Lets the compiled statements run on `db` bypass Kysely's executor (about 3 µs a statement) and
 * run on `connection` instead. For the store's `db` on SQLite that is the read connection: reads
 * outside transactions see committed data only, and writes still go through Kysely. For a group
 * commit's transaction (`writes`), it is the connection that holds the transaction.
 */
export function runDirectly<DB>(db: Kysely<DB>, connection: DirectConnection, writes = false): void {
  readers.set(db, connection)
  if (writes) writers.set(db, connection)
}

/** SQL text per dialect (keyed by the adapter's class) and query name. */
const texts = new WeakMap<object, Map<string, string>>()

/**
 * Runs a hot query without rebuilding it: Kysely builds and compiles every query it runs, which
 * profiling showed at about 15% of a point read. The query is built and compiled once per
 * dialect (with placeholder values) and then run with `parameters`, which must follow the order
 * in which the built query uses its values. On SQLite it runs directly on its connection
 * (`runDirectly`).
 */
export async function runCompiled<DB, R>(
  db: Kysely<DB>,
  name: string,
  build: () => { compile(): CompiledQuery<R> },
  parameters: readonly unknown[],
): Promise<R[]> {
  const text = compiledText(db, name, build)
  const connection = readers.get(db)
  if (connection) return connection(text, parameters) as R[]
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
  const text = compiledText(db, `insert ${table}`, build)
  const values = columns.map((column) => row[column] ?? null)
  const connection = writers.get(db)
  if (connection) connection(text, values)
  else await db.executeQuery(CompiledQuery.raw(text, values))
}

/** Runs a statement given as SQL text, directly where `runDirectly` allows. */
export async function runStatement<DB>(db: Kysely<DB>, statement: CompiledQuery): Promise<void> {
  const connection = writers.get(db)
  if (connection) connection(statement.sql, statement.parameters)
  else await db.executeQuery(statement)
}

function compiledText<DB>(db: Kysely<DB>, name: string, build: () => { compile(): CompiledQuery<unknown> }) {
  const dialect = db.getExecutor().adapter.constructor
  let byName = texts.get(dialect)
  if (!byName) {
    byName = new Map()
    texts.set(dialect, byName)
  }
  let text = byName.get(name)
  if (text === undefined) {
    text = build().compile().sql
    byName.set(name, text)
  }
  return text
}

import { CompiledQuery, type Kysely } from 'kysely'

/** Runs a read synchronously on a connection of its own; see `useDirectReads`. */
export type DirectReader = (sql: string, parameters: readonly unknown[]) => unknown[]

const readers = new WeakMap<object, DirectReader>()

/**
 * Lets compiled reads on `db` (outside transactions) bypass Kysely's executor and run on
 * `reader`: SQLite's read connection, which sees committed data only.
 */
export function useDirectReads(db: Kysely<unknown>, reader: DirectReader): void {
  readers.set(db, reader)
}

/** SQL text per dialect (keyed by the adapter's class) and query name. */
const texts = new WeakMap<object, Map<string, string>>()

/**
 * Runs a hot query without rebuilding it: Kysely builds and compiles every query it runs, which
 * profiling showed at about 15% of a point read. The query is built and compiled once per
 * dialect (with placeholder values) and then run with `parameters`, which must follow the order
 * in which the built query uses its values. Outside a transaction on SQLite, the query runs
 * directly on the read connection (`useDirectReads`).
 */
export async function runCompiled<DB, R>(
  db: Kysely<DB>,
  name: string,
  build: () => { compile(): CompiledQuery<R> },
  parameters: readonly unknown[],
): Promise<R[]> {
  const text = compiledText(db, name, build)
  const reader = db.isTransaction ? undefined : readers.get(db)
  if (reader) return reader(text, parameters) as R[]
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
  await db.executeQuery(
    CompiledQuery.raw(
      text,
      columns.map((column) => row[column] ?? null),
    ),
  )
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

import {
  type Compilable,
  CompiledQuery,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely'
import type { DialectName } from './dialect.js'
import type { Database } from './tables.js'

/**
 * The store's fast path: the statements of the request path (point reads, list pages, the
 * inserts of a create and of the evaluation log), built with Kysely once, when this module loads,
 * and then run by their text. Kysely builds and compiles every query it runs, which profiling
 * showed at about 15% of a point read.
 *
 * A statement names its parameters: it is built once with a stand-in for each, and the compiled
 * text says which parameter each positional value is, so a call passes them by name and none can
 * shift. Its text begins with its name as a comment (`/* findPolicy *\/ select …`): PostgreSQL
 * runs such a statement as a named one (pg-named-statements.ts), and the name shows in
 * `pg_stat_activity`.
 *
 * Where a statement runs is the `Statements` it is handed: the store's (`Store.statements`: on
 * SQLite its read-only connection, synchronously) or a write's (`StoreTransaction.statements`).
 */

/** A statement of the fast path, compiled for each dialect; `R` is the row it returns. */
export interface Statement<P, R> {
  readonly name: string
  readonly text: Readonly<Record<DialectName, string>>
  /** Which parameter each positional value is, in order, for each dialect. */
  readonly order: Readonly<Record<DialectName, readonly (keyof P & string)[]>>
  /** Never set: carries the row type. */
  readonly row?: R
}

/** Kysely instances that only compile (Kysely's DummyDriver): no connection, no database. */
const compilers: Record<DialectName, Kysely<Database>> = {
  sqlite: new Kysely<Database>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  }),
  postgres: new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  }),
}

/** The stand-in a statement is built with for each of its parameters. */
const STAND_IN = '\u0000parameter:'

/** Stand-ins for every parameter a builder reads. */
const standIns = <P>(): P =>
  new Proxy({} as Record<string, string>, { get: (_, key) => `${STAND_IN}${String(key)}` }) as P

const NAME = /^[A-Za-z][A-Za-z0-9_]*$/

/**
 * Defines a statement: `build` makes the query from the parameters it is given, as any Kysely
 * query is made. Every value the query binds must be one of them; anything else throws here, at
 * load, rather than run with a value baked in.
 */
export function defineStatement<P, R>(
  name: string,
  build: (db: Kysely<Database>, p: P) => Compilable<R>,
): Statement<P, R> {
  if (!NAME.test(name)) throw new Error(`statement name "${name}" must match ${NAME}`)
  const compile = (dialect: DialectName) => {
    const compiled = build(compilers[dialect], standIns<P>()).compile()
    const order = compiled.parameters.map((value) => {
      if (typeof value !== 'string' || !value.startsWith(STAND_IN))
        throw new Error(
          `statement ${name} binds ${JSON.stringify(value)}, which is not one of its parameters`,
        )
      return value.slice(STAND_IN.length) as keyof P & string
    })
    return { text: `/* ${name} */ ${compiled.sql}`, order }
  }
  const sqlite = compile('sqlite')
  const postgres = compile('postgres')
  return {
    name,
    text: { sqlite: sqlite.text, postgres: postgres.text },
    order: { sqlite: sqlite.order, postgres: postgres.order },
  }
}

/** A statement that inserts one row into `table`, taking `columns` from the row (absent: NULL). */
export function defineInsert<Row>(
  name: string,
  table: keyof Database & string,
  columns: readonly (keyof Row & string)[],
): Statement<Row, never> {
  return defineStatement<Row, never>(name, (db, row) =>
    db.insertInto(table).values(Object.fromEntries(columns.map((column) => [column, row[column]])) as never),
  )
}

/** The name a statement's text carries, or undefined for any other text. */
export function statementName(text: string): string | undefined {
  if (!text.startsWith('/* ')) return undefined
  const end = text.indexOf(' */ ', 3)
  if (end < 0) return undefined
  const name = text.slice(3, end)
  return NAME.test(name) ? name : undefined
}

/** Where a page is cut: its `limit` and `offset` parameters (`definePage`). */
interface Cut {
  limit: number
  offset: number
}

/**
 * The positional values of a statement's text, in order; a page's `limit` and `offset` from
 * `cut`, passed apart (a copy of `values` with them added cost 3 µs on a page of 50).
 */
export function parametersOf<P>(
  statement: Statement<P, unknown>,
  dialect: DialectName,
  values: P,
  cut?: Cut,
): unknown[] {
  const order = statement.order[dialect]
  const out = new Array<unknown>(order.length)
  for (let i = 0; i < order.length; i++) {
    const key = order[i] as keyof P & string
    out[i] =
      cut !== undefined && (key === 'limit' || key === 'offset')
        ? cut[key as keyof Cut]
        : (values[key] ?? null)
  }
  return out
}

/** A query over `seq` and `doc` columns, in `seq` order, that a page can be cut from. */
interface PageQuery {
  limit(limit: number): PageQuery
  offset(offset: number): PageQuery
  compile(): CompiledQuery<unknown>
}

/**
 * A page of stored documents, as three statements: `rows` reads `seq` and `doc` of up to
 * `limit` rows; on SQLite's read connection `docs` reads the texts alone (row objects were half
 * the cost of a page of 50) and `last` the position of the last one, in the same read
 * transaction.
 */
export interface PageStatement<P> {
  readonly rows: Statement<P, { seq: number; doc: string }>
  readonly docs: Statement<P, string>
  readonly last: Statement<P, number>
}

/** Defines a page: `query(columns)` selects those columns, filtered by `p`, ordered by `seq`. */
export function definePage<P>(
  name: string,
  query: (db: Kysely<Database>, p: P, columns: readonly ('seq' | 'doc')[]) => PageQuery,
): PageStatement<P> {
  // `limit` and `offset` are bound from where the page is cut (`parametersOf`), not from `p`.
  type Limited = P & Cut
  return {
    rows: defineStatement(name, (db, p: Limited) => query(db, p, ['seq', 'doc']).limit(p.limit)),
    docs: defineStatement(`${name}Documents`, (db, p: Limited) => query(db, p, ['doc']).limit(p.limit)),
    last: defineStatement(`${name}Last`, (db, p: Limited) =>
      query(db, p, ['seq']).limit(p.limit).offset(p.offset),
    ),
  } as PageStatement<P>
}

/** Up to `limit` stored documents and, when more follow, the position of the last one. */
export interface DocumentPage {
  docs: string[]
  last: number | null
}

/** Where statements run: the store's read side, or the connection that holds a write. */
export interface Statements {
  /** Runs a query and returns its first row, without stepping further (a point read). */
  first<P, R>(statement: Statement<P, R>, values: P): Promise<R | undefined>
  /** Runs a query and returns all its rows. */
  all<P, R>(statement: Statement<P, R>, values: P): Promise<R[]>
  /**
   * Runs a write. Inside a group commit on SQLite it is sent without waiting: a failure (a
   * duplicate key, a missing parent) fails the write when the group commits, so callers map such
   * errors where they call `Store.write`, not inside the write.
   */
  run<P>(statement: Statement<P, unknown>, values: P): Promise<void>
  /** Reads one page: up to `limit` documents and, when more follow, the `seq` of the last one. */
  page<P>(page: PageStatement<P>, values: P, limit: number): Promise<DocumentPage>
}

/** A SQLite connection that statements run on synchronously, without Kysely. */
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
   * inside a group commit): its failure fails the write it belongs to when the group commits.
   */
  send?(sql: string, parameters: readonly unknown[]): void
}

/**
 * A text parameter given as its UTF-8 bytes (a large JSON text written off the event loop): on
 * SQLite they move to the writer thread without a copy (`SqliteWriter`: their buffer is detached
 * here once sent) and bind as a blob, which the statement casts to text (`cast(? as text)`: the
 * same bytes, stored as text); on PostgreSQL they are decoded, once, to the string bound.
 */
export class Utf8Text {
  constructor(readonly bytes: Uint8Array) {}
}

const decoder = new TextDecoder()

/** `parameters` with each `Utf8Text` decoded to its string (PostgreSQL). */
function decodedTexts(parameters: unknown[]): unknown[] {
  for (let i = 0; i < parameters.length; i++) {
    const value = parameters[i]
    if (value instanceof Utf8Text) parameters[i] = decoder.decode(value.bytes)
  }
  return parameters
}

/** Statements run through Kysely on `db` (a PostgreSQL pool or transaction, or SQLite's writer). */
export function kyselyStatements(db: Kysely<Database>, dialect: DialectName): Statements {
  const execute = <P, R>(statement: Statement<P, R>, values: P, cut?: Cut) => {
    const parameters = parametersOf(statement, dialect, values, cut)
    return db.executeQuery<R>(
      CompiledQuery.raw(
        statement.text[dialect],
        dialect === 'postgres' ? decodedTexts(parameters) : parameters,
      ),
    )
  }
  return {
    async first(statement, values) {
      return (await execute(statement, values)).rows[0]
    },
    async all(statement, values) {
      return (await execute(statement, values)).rows
    },
    async run(statement, values) {
      await execute(statement, values)
    },
    async page(page, values, limit) {
      const { rows } = await execute(page.rows, values, { limit: limit + 1, offset: 0 })
      const more = rows.length > limit
      const kept = more ? rows.slice(0, limit) : rows
      return { docs: kept.map((row) => row.doc), last: more ? (kept[kept.length - 1]?.seq ?? null) : null }
    },
  }
}

/**
 * Statements run synchronously on a SQLite connection: the store's read connection (whose writes
 * go to `writes`) or the writer thread's inside a group commit (writes sent without waiting).
 */
export function directStatements(connection: DirectConnection, writes?: Statements): Statements {
  const parameters = <P>(statement: Statement<P, unknown>, values: P, cut?: Cut) =>
    parametersOf(statement, 'sqlite', values, cut)
  return {
    async first<P, R>(statement: Statement<P, R>, values: P) {
      return connection.first(statement.text.sqlite, parameters(statement, values)) as R | undefined
    },
    async all<P, R>(statement: Statement<P, R>, values: P) {
      return connection.run(statement.text.sqlite, parameters(statement, values)) as R[]
    },
    async run(statement, values) {
      if (writes) return writes.run(statement, values)
      const text = statement.text.sqlite
      if (connection.send) connection.send(text, parameters(statement, values))
      else connection.run(text, parameters(statement, values))
    },
    async page(page, values, limit) {
      return connection.snapshot(() => {
        const docs = connection.column(
          page.docs.text.sqlite,
          parameters(page.docs, values, { limit: limit + 1, offset: 0 }),
        ) as string[]
        if (docs.length <= limit) return { docs, last: null }
        docs.pop()
        const last = connection.column(
          page.last.text.sqlite,
          parameters(page.last, values, { limit: 1, offset: limit - 1 }),
        )[0] as number | undefined
        return { docs, last: last ?? null }
      })
    },
  }
}

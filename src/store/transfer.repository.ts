import type { Kysely } from 'kysely'
import type { Database } from './tables.js'

/**
 * The queries of a whole-store export and import (services/transfer.service.ts): tables read
 * whole a page at a time, and rows written back as they were. Rows are untyped here: the export
 * format is the tables' own columns.
 */

type Row = Record<string, unknown>
type AnyDb = Kysely<Record<string, Row>>

const untyped = (db: Kysely<Database>) => db as unknown as AnyDb

const PAGE = 1000

/** Every policy revision row, a page at a time, in primary-key order (keyset pages). */
export async function* revisionPages(db: Kysely<Database>): AsyncGenerator<Row[]> {
  const key = ['workspace_id', 'application_id', 'policy_id', 'revision'] as const
  let after: unknown[] | null = null
  for (;;) {
    let query = untyped(db).selectFrom('policy_revisions').selectAll()
    if (after) {
      const last = after
      query = query.where((eb) =>
        eb(eb.refTuple(key[0], key[1], key[2], key[3]), '>', eb.tuple(last[0], last[1], last[2], last[3])),
      )
    }
    const rows = await query
      .orderBy(key[0])
      .orderBy(key[1])
      .orderBy(key[2])
      .orderBy(key[3])
      .limit(PAGE)
      .execute()
    yield rows
    const last = rows[rows.length - 1]
    if (rows.length < PAGE || !last) return
    after = key.map((k) => last[k])
  }
}

/** Every row of a small table (workspaces, API keys), in creation order. */
export function allRowsByCreation(db: Kysely<Database>, table: 'workspaces' | 'api_keys'): Promise<Row[]> {
  return untyped(db).selectFrom(table).selectAll().orderBy('created').orderBy('id').execute()
}

/** How many workspaces the store has (an import needs an empty store). */
export async function countWorkspaces(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('workspaces')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Writes rows of one table as they are. */
export async function insertRows(db: Kysely<Database>, table: keyof Database, rows: Row[]): Promise<void> {
  await untyped(db).insertInto(table).values(rows).execute()
}

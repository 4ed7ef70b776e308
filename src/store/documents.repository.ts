import type { Kysely } from 'kysely'
import type { Database } from './tables.js'

type Db = Kysely<Database>

/** A fact about the store, by name, or undefined when never written. */
export async function readStoreMetadata(db: Db, name: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('store_metadata')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirst()
  return row?.value
}

export async function writeStoreMetadata(db: Db, name: string, value: string): Promise<void> {
  await db
    .insertInto('store_metadata')
    .values({ name, value })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value }))
    .execute()
}

/** Replaces the stored JSON text of one row of `applications` or `policies`. */
export async function updateDocument(
  db: Db,
  table: 'applications' | 'policies',
  seq: number,
  doc: string,
): Promise<void> {
  await db.updateTable(table).set({ doc }).where('seq', '=', seq).execute()
}

import type { Kysely, Migration } from 'kysely'

/**
 * Facts about the store itself, by name: the version of the stored JSON texts, so that start-up
 * knows when to render them again. Frozen: never edit.
 */
export function storeMetadata(): Migration {
  return {
    // biome-ignore lint/suspicious/noExplicitAny: a migration is typed against no schema of today
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('store_metadata')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute()
    },
  }
}

import { type Kysely, type Migration, sql } from 'kysely'
import type { MigrationDialect } from './dialect.js'

/**
 * What asked for each logged evaluation (`api`, `playground`, `chat_input`, `chat_output`) as a
 * column, so that the log can be listed by it, a page at a time, newest first: a keyset scan of
 * `(app_seq, source, created, seq)`, like the verdict's index. Entries logged before hold it in
 * their stored text only; it is copied from there. Frozen: never edit.
 */
export function evaluationSource(dialect: MigrationDialect): Migration {
  const pg = dialect === 'postgres'
  return {
    // biome-ignore lint/suspicious/noExplicitAny: a migration is typed against no schema of today
    async up(db: Kysely<any>) {
      await db.schema.alterTable('evaluations').addColumn('source', 'text').execute()
      await db
        .updateTable('evaluations')
        .set({ source: pg ? sql`(doc::json ->> 'source')` : sql`json_extract(doc, '$.source')` })
        .execute()
      await db.schema
        .createIndex('evaluations_app_source_idx')
        .on('evaluations')
        .columns(['app_seq', 'source', 'created', 'seq'])
        .execute()
    },
  }
}

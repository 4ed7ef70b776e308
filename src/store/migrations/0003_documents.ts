import type { Kysely, Migration } from 'kysely'

/**
 * A column for the JSON text the API shows for each application and policy. The texts are not
 * written here: rendering them is today's code, and a migration must build the same database in
 * a year. Start-up renders every missing or outdated text after migrating (services/documents.ts).
 * Frozen: never edit.
 */
export function documents(): Migration {
  return {
    // biome-ignore lint/suspicious/noExplicitAny: a migration is typed against no schema of today
    async up(db: Kysely<any>) {
      for (const table of ['applications', 'policies']) {
        await db.schema.alterTable(table).addColumn('doc', 'text').execute()
      }
    },
  }
}

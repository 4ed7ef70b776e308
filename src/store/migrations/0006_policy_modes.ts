import type { Kysely, Migration } from 'kysely'

/**
 * A policy's `mode` (enforce or monitor) and `on_error` (fail_closed or fail_open), on the policy
 * and on each past revision. NULL means the default (enforce, fail_closed), so every existing
 * row keeps its meaning. Frozen: never edit.
 */
export function policyModes(): Migration {
  return {
    // biome-ignore lint/suspicious/noExplicitAny: a migration is typed against no schema of today
    async up(db: Kysely<any>) {
      for (const table of ['policies', 'policy_revisions']) {
        await db.schema.alterTable(table).addColumn('mode', 'text').execute()
        await db.schema.alterTable(table).addColumn('on_error', 'text').execute()
      }
    },
  }
}

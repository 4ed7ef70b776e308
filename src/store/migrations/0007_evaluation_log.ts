import { type Kysely, type Migration, sql } from 'kysely'
import type { MigrationDialect } from './dialect.js'

/**
 * The evaluation log: one row per evaluation, and one row per policy it evaluated, so that the
 * log can be listed newest first for an application, filtered by verdict, by policy and by time,
 * a page at a time, at ten million entries and more. Frozen: never edit.
 *
 * - `evaluations.app_seq` is the application's row sequence, not its id: an application deleted
 *   and created again under the same id starts a log of its own, and every index entry is an
 *   integer shorter than a workspace and application id. No foreign key: deleting an application
 *   must not delete millions of log rows inside that request; its entries go with retention.
 * - Pages are keyset scans in (created, seq) order: newest first `(app_seq, created, seq)`, with
 *   a verdict `(app_seq, verdict, created, seq)`, with a policy `evaluation_policies
 *   (app_seq, policy_id, created, seq)`. B-trees, not an array with a GIN index on PostgreSQL: a
 *   GIN index yields its matches unordered, so the newest 50 of a policy's million entries would
 *   have to read and sort all million.
 * - Retention walks the log in `seq` order (the primary key, roughly the order of `created`) and
 *   deletes ranges of it; `evaluation_policies` is keyed by `(seq, policy_id)` so that its rows
 *   of those evaluations are a range of its primary key too.
 * - `doc` is the entry as the API shows it, JSON text sent as stored.
 */
export function evaluationLog(dialect: MigrationDialect): Migration {
  const pg = dialect === 'postgres'
  const int = pg ? 'bigint' : 'integer'
  return {
    // biome-ignore lint/suspicious/noExplicitAny: a migration is typed against no schema of today
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('evaluations')
        .addColumn('seq', int, (c) =>
          pg ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement(),
        )
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('app_seq', int, (c) => c.notNull())
        .addColumn('created', int, (c) => c.notNull())
        .addColumn('verdict', 'text', (c) => c.notNull())
        .addColumn('doc', 'text', (c) => c.notNull())
        .execute()
      await db.schema
        .createIndex('evaluations_app_created_idx')
        .on('evaluations')
        .columns(['app_seq', 'created', 'seq'])
        .execute()
      await db.schema
        .createIndex('evaluations_app_verdict_idx')
        .on('evaluations')
        .columns(['app_seq', 'verdict', 'created', 'seq'])
        .execute()

      let policies = db.schema
        .createTable('evaluation_policies')
        .addColumn('seq', int, (c) => c.notNull())
        .addColumn('policy_id', 'text', (c) => c.notNull())
        .addColumn('app_seq', int, (c) => c.notNull())
        .addColumn('created', int, (c) => c.notNull())
        .addColumn('verdict', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('evaluation_policies_pk', ['seq', 'policy_id'])
      // On SQLite the primary key is the table itself: no rowid, no second b-tree.
      if (!pg) policies = policies.modifyEnd(sql`without rowid`)
      await policies.execute()
      await db.schema
        .createIndex('evaluation_policies_app_policy_idx')
        .on('evaluation_policies')
        .columns(['app_seq', 'policy_id', 'created', 'seq'])
        .execute()
      // The policy and verdict filters together read this index alone, in the page's order: on
      // PostgreSQL, joining the entries to check their verdict read every entry of the policy
      // back to the page's last failure (0.48 × the small log's speed at ten million entries).
      await db.schema
        .createIndex('evaluation_policies_app_policy_verdict_idx')
        .on('evaluation_policies')
        .columns(['app_seq', 'policy_id', 'verdict', 'created', 'seq'])
        .execute()
    },
  }
}

import type { Kysely, Migration } from 'kysely'
import type { MigrationDialect } from './dialect.js'

/**
 * Policy test cases: example conversations with the verdict their policy must give. They belong
 * to a policy and go with it (and with its application). Frozen: never edit.
 */
export function policyTests(dialect: MigrationDialect): Migration {
  const pg = dialect === 'postgres'
  const int = pg ? 'bigint' : 'integer'
  const json = pg ? 'jsonb' : 'text'
  return {
    // biome-ignore lint/suspicious/noExplicitAny: a migration is typed against no schema of today
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('policy_tests')
        .addColumn('seq', int, (c) =>
          pg ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement(),
        )
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('application_id', 'text', (c) => c.notNull())
        .addColumn('policy_id', 'text', (c) => c.notNull())
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('messages', json, (c) => c.notNull())
        .addColumn('context', json)
        .addColumn('expected', json, (c) => c.notNull())
        .addColumn('etag', 'text', (c) => c.notNull())
        .addColumn('created', int, (c) => c.notNull())
        .addColumn('updated', int, (c) => c.notNull())
        .addUniqueConstraint('policy_tests_policy_id_key', [
          'workspace_id',
          'application_id',
          'policy_id',
          'id',
        ])
        .addForeignKeyConstraint(
          'policy_tests_policy_fk',
          ['workspace_id', 'application_id', 'policy_id'],
          'policies',
          ['workspace_id', 'application_id', 'id'],
          (fk) => fk.onDelete('cascade'),
        )
        .execute()
      // Lists in creation order, and the cascade from a deleted policy, read this index.
      await db.schema
        .createIndex('policy_tests_policy_seq_idx')
        .on('policy_tests')
        .columns(['workspace_id', 'application_id', 'policy_id', 'seq'])
        .execute()
    },
  }
}

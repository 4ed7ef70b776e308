import type { Kysely, Migration } from 'kysely'
import type { MigrationDialect } from './dialect.js'

/** Workspaces, API keys, applications, policies and their revisions. Frozen: never edit. */
export function initial(dialect: MigrationDialect): Migration {
  const pg = dialect === 'postgres'
  const int = pg ? 'bigint' : 'integer'
  const json = pg ? 'jsonb' : 'text'
  return {
    // biome-ignore lint/suspicious/noExplicitAny: a migration is typed against no schema of today
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('workspaces')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('created', int, (c) => c.notNull())
        .execute()

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('name', 'text')
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('scopes', json, (c) => c.notNull())
        .addColumn('created', int, (c) => c.notNull())
        .addColumn('expires_at', int)
        .addColumn('revoked_at', int)
        .execute()
      await db.schema.createIndex('api_keys_workspace_idx').on('api_keys').columns(['workspace_id']).execute()

      await db.schema
        .createTable('applications')
        .addColumn('seq', pg ? 'bigint' : 'integer', (c) =>
          pg ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement(),
        )
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('provider', 'text')
        .addColumn('model', 'text')
        .addColumn('parameters', json)
        .addColumn('etag', 'text', (c) => c.notNull())
        .addColumn('created', int, (c) => c.notNull())
        .addColumn('updated', int, (c) => c.notNull())
        .addUniqueConstraint('applications_workspace_id_key', ['workspace_id', 'id'])
        .execute()
      await db.schema
        .createIndex('applications_workspace_seq_idx')
        .on('applications')
        .columns(['workspace_id', 'seq'])
        .execute()

      await db.schema
        .createTable('policies')
        .addColumn('seq', pg ? 'bigint' : 'integer', (c) =>
          pg ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement(),
        )
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('application_id', 'text', (c) => c.notNull())
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('rules', json, (c) => c.notNull())
        .addColumn('target', json, (c) => c.notNull())
        .addColumn('definition', 'text')
        .addColumn('override_response', 'text')
        .addColumn('revision', int, (c) => c.notNull())
        .addColumn('etag', 'text', (c) => c.notNull())
        .addColumn('created', int, (c) => c.notNull())
        .addColumn('updated', int, (c) => c.notNull())
        .addUniqueConstraint('policies_application_id_key', ['workspace_id', 'application_id', 'id'])
        .addForeignKeyConstraint(
          'policies_application_fk',
          ['workspace_id', 'application_id'],
          'applications',
          ['workspace_id', 'id'],
          (fk) => fk.onDelete('cascade'),
        )
        .execute()
      await db.schema
        .createIndex('policies_application_seq_idx')
        .on('policies')
        .columns(['workspace_id', 'application_id', 'seq'])
        .execute()

      await db.schema
        .createTable('policy_revisions')
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('application_id', 'text', (c) => c.notNull())
        .addColumn('policy_id', 'text', (c) => c.notNull())
        .addColumn('revision', int, (c) => c.notNull())
        .addColumn('rules', json, (c) => c.notNull())
        .addColumn('target', json, (c) => c.notNull())
        .addColumn('definition', 'text')
        .addColumn('override_response', 'text')
        .addColumn('created', int, (c) => c.notNull())
        .addPrimaryKeyConstraint('policy_revisions_pk', [
          'workspace_id',
          'application_id',
          'policy_id',
          'revision',
        ])
        .addForeignKeyConstraint(
          'policy_revisions_policy_fk',
          ['workspace_id', 'application_id', 'policy_id'],
          'policies',
          ['workspace_id', 'application_id', 'id'],
          (fk) => fk.onDelete('cascade'),
        )
        .execute()
    },
  }
}

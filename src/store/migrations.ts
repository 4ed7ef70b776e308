import {
  type Kysely,
  type Migration,
  type MigrationProvider,
  type MigrationResultSet,
  Migrator,
  sql,
} from 'kysely'
import { rowDocument } from '../services/documents.js'
import type { Store } from './database.js'
import type { DialectName } from './dialect.js'
import { pagesBySeq } from './pages.js'
import { deleteCurrentRevisionRows } from './policies.repository.js'
import type { Database } from './tables.js'

type AnyDb = Kysely<unknown>

function migrations(dialect: DialectName): Record<string, Migration> {
  const pg = dialect === 'postgres'
  const int = pg ? 'bigint' : 'integer'
  const json = pg ? 'jsonb' : 'text'
  return {
    '0001_initial': {
      async up(db: AnyDb) {
        await db.schema
          .createTable('workspaces')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('name', 'text', (c) => c.notNull().unique())
          .addColumn('created', int, (c) => c.notNull())
          .execute()

        await db.schema
          .createTable('api_keys')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('workspace_id', 'text', (c) =>
            c.notNull().references('workspaces.id').onDelete('cascade'),
          )
          .addColumn('name', 'text')
          .addColumn('key_hash', 'text', (c) => c.notNull().unique())
          .addColumn('prefix', 'text', (c) => c.notNull())
          .addColumn('scopes', json, (c) => c.notNull())
          .addColumn('created', int, (c) => c.notNull())
          .addColumn('expires_at', int)
          .addColumn('revoked_at', int)
          .execute()
        await db.schema
          .createIndex('api_keys_workspace_idx')
          .on('api_keys')
          .columns(['workspace_id'])
          .execute()

        await db.schema
          .createTable('applications')
          .addColumn('seq', pg ? 'bigint' : 'integer', (c) =>
            pg ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement(),
          )
          .addColumn('workspace_id', 'text', (c) =>
            c.notNull().references('workspaces.id').onDelete('cascade'),
          )
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
    },
    '0002_idempotency_keys': {
      async up(db: AnyDb) {
        await db.schema
          .createTable('idempotency_keys')
          .addColumn('workspace_id', 'text', (c) =>
            c.notNull().references('workspaces.id').onDelete('cascade'),
          )
          // SHA-256 of the client's key: the key itself is what decrypts `response`, so it is not stored.
          .addColumn('key_hash', 'text', (c) => c.notNull())
          // SHA-256 of method, path and canonical body: a reuse with another request is refused.
          .addColumn('fingerprint', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          // The stored answer, AES-256-GCM encrypted under a key derived from the client's key.
          .addColumn('response', 'text')
          .addColumn('created', int, (c) => c.notNull())
          .addColumn('expires_at', int, (c) => c.notNull())
          .addPrimaryKeyConstraint('idempotency_keys_pk', ['workspace_id', 'key_hash'])
          .execute()
        await db.schema
          .createIndex('idempotency_keys_expiry_idx')
          .on('idempotency_keys')
          .columns(['expires_at'])
          .execute()
      },
    },
    '0003_documents': {
      async up(db: AnyDb) {
        for (const table of ['applications', 'policies'] as const) {
          await db.schema.alterTable(table).addColumn('doc', 'text').execute()
        }
        await backfillDocuments(db as unknown as Kysely<Database>)
      },
    },
    // A policy's current version is kept once, in its row; revision rows hold past versions.
    '0004_past_revisions_only': {
      async up(db: AnyDb) {
        await deleteCurrentRevisionRows(db as unknown as Kysely<Database>)
      },
    },
  }
}

/** Writes the stored JSON text of every application and policy of an existing store, in pages. */
async function backfillDocuments(db: Kysely<Database>): Promise<void> {
  const fill = async (trx: Kysely<Database>) => {
    for (const table of ['applications', 'policies'] as const) {
      for await (const rows of pagesBySeq(trx, table)) {
        for (const row of rows) {
          await trx
            .updateTable(table)
            .set({ doc: rowDocument(table, row) })
            .where('seq', '=', row.seq as number)
            .execute()
        }
      }
    }
  }
  // One transaction (and one commit) on SQLite, whose migrations run outside one.
  if (db.isTransaction) await fill(db)
  else await db.transaction().execute(fill)
}

class InCodeProvider implements MigrationProvider {
  constructor(private readonly dialect: DialectName) {}
  async getMigrations() {
    return migrations(this.dialect)
  }
}

// Any constant will do; it only has to be the same for every Warden instance.
const MIGRATION_LOCK_ID = 7_374_221_001

/**
 * Applies pending migrations. On PostgreSQL a session advisory lock makes instances that start
 * together take turns, so each migration runs exactly once.
 */
export async function migrateToLatest(store: Store): Promise<string[]> {
  return migrate(store, (migrator) => migrator.migrateToLatest())
}

/** Migrates up (or down) to the named migration: for tests of a store made by an older version. */
export async function migrateTo(store: Store, name: string): Promise<string[]> {
  return migrate(store, (migrator) => migrator.migrateTo(name))
}

async function migrate(
  store: Store,
  step: (migrator: Migrator) => Promise<MigrationResultSet>,
): Promise<string[]> {
  const run = async (db: Kysely<unknown>, migrationTableSchema?: string) => {
    const migrator = new Migrator({
      db,
      provider: new InCodeProvider(store.dialect),
      ...(migrationTableSchema ? { migrationTableSchema } : {}),
    })
    const { error, results } = await step(migrator)
    if (error) throw error instanceof Error ? error : new Error(String(error))
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
  }
  if (store.dialect !== 'postgres') return run(store.db as unknown as AnyDb)
  return store.db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_ID})`.execute(conn)
    try {
      // Kysely looks for its bookkeeping tables in every schema unless told which one; name the
      // schema in use, or a second Warden schema in the same database would fool it.
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(conn)
      return await run(conn as unknown as AnyDb, rows[0]?.schema)
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`.execute(conn)
    }
  })
}

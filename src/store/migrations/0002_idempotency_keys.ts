import type { Kysely, Migration } from 'kysely'
import type { MigrationDialect } from './dialect.js'

/** Stored answers of idempotent creates. Frozen: never edit. */
export function idempotencyKeys(dialect: MigrationDialect): Migration {
  const int = dialect === 'postgres' ? 'bigint' : 'integer'
  return {
    // biome-ignore lint/suspicious/noExplicitAny: a migration is typed against no schema of today
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
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
  }
}

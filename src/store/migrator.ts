import { type Kysely, type MigrationProvider, type MigrationResultSet, Migrator, sql } from 'kysely'
import type { Store } from './database.js'
import { allMigrations } from './migrations/index.js'
import type { Database } from './tables.js'

class InCodeProvider implements MigrationProvider {
  constructor(private readonly dialect: Store['dialect']) {}
  async getMigrations() {
    return allMigrations(this.dialect)
  }
}

// Any constant will do; it only has to be the same for every Warden instance.
const MIGRATION_LOCK_ID = 7_374_221_001

/**
 * Work that start-up does after migrating, while still holding the migration lock: on
 * PostgreSQL, instances that start together take turns, so it runs once. `db` is the connection
 * that holds the lock (the store's own on SQLite).
 */
export type AfterMigrations = (db: Kysely<Database>) => Promise<void>

/**
 * Applies pending migrations, then `afterwards`. On PostgreSQL a session advisory lock makes
 * instances that start together take turns, so each migration runs exactly once.
 */
export async function migrateToLatest(store: Store, afterwards?: AfterMigrations): Promise<string[]> {
  return migrate(store, (migrator) => migrator.migrateToLatest(), afterwards)
}

/** Migrates up (or down) to the named migration: for tests of a store made by an older version. */
export async function migrateTo(store: Store, name: string): Promise<string[]> {
  return migrate(store, (migrator) => migrator.migrateTo(name))
}

async function migrate(
  store: Store,
  step: (migrator: Migrator) => Promise<MigrationResultSet>,
  afterwards?: AfterMigrations,
): Promise<string[]> {
  // biome-ignore lint/suspicious/noExplicitAny: migrations are typed against no schema of today
  const run = async (db: Kysely<any>, migrationTableSchema?: string) => {
    const migrator = new Migrator({
      db,
      provider: new InCodeProvider(store.dialect),
      ...(migrationTableSchema ? { migrationTableSchema } : {}),
    })
    const { error, results } = await step(migrator)
    if (error) throw error instanceof Error ? error : new Error(String(error))
    await afterwards?.(db)
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
  }
  if (store.dialect !== 'postgres') return run(store.db)
  return store.db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_ID})`.execute(conn)
    try {
      // Kysely looks for its bookkeeping tables in every schema unless told which one; name the
      // schema in use, or a second Warden schema in the same database would fool it.
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(conn)
      return await run(conn, rows[0]?.schema)
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`.execute(conn)
    }
  })
}

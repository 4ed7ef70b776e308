import type { Store } from '../store/database.js'
import { refreshDocuments } from '../store/documents.js'
import { migrateToLatest } from '../store/migrator.js'

/** What readying a store did. */
export interface StoreSetup {
  /** Migrations applied, by name. */
  migrations: string[]
  /** Stored texts rendered again because their version changed. */
  documents: number
}

/**
 * Readies a store for this version of Warden: applies pending migrations, then renders the
 * stored texts again if their version changed. Every entry point (the server, the operator's
 * commands, the tests) goes through here.
 */
export async function prepareStore(store: Store): Promise<StoreSetup> {
  let documents = 0
  const migrations = await migrateToLatest(store, async (db) => {
    documents = await refreshDocuments(db)
  })
  return { migrations, documents }
}

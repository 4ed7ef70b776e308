import type { Insertable, Kysely } from 'kysely'
import type { Store } from './database.js'
import type { Database, IdempotencyKeysTable, IdempotencyRow } from './tables.js'

type Db = Kysely<Database>

// Each write here is one statement, atomic by itself: it runs without a transaction.

export async function insertIdempotencyKey(
  store: Store,
  row: Insertable<IdempotencyKeysTable>,
): Promise<void> {
  await store.writeOne(({ db }) => db.insertInto('idempotency_keys').values(row).execute())
}

export async function findIdempotencyKey(
  db: Db,
  workspaceId: string,
  keyHash: string,
): Promise<IdempotencyRow | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('key_hash', '=', keyHash)
    .executeTakeFirst()
}

/** Stores the answer of a finished request. */
export async function completeIdempotencyKey(
  store: Store,
  workspaceId: string,
  keyHash: string,
  response: string,
): Promise<void> {
  await store.writeOne(({ db }) =>
    db
      .updateTable('idempotency_keys')
      .set({ state: 'done', response })
      .where('workspace_id', '=', workspaceId)
      .where('key_hash', '=', keyHash)
      .execute(),
  )
}

/** Takes over a record only if it is still the one that was read (same creation time). */
export async function takeOverIdempotencyKey(
  store: Store,
  row: IdempotencyRow,
  changes: { fingerprint: string; created: number; expires_at: number },
): Promise<boolean> {
  const result = await store.writeOne(({ db }) =>
    db
      .updateTable('idempotency_keys')
      .set({ ...changes, state: 'running', response: null })
      .where('workspace_id', '=', row.workspace_id)
      .where('key_hash', '=', row.key_hash)
      .where('created', '=', row.created)
      .where('state', '=', row.state)
      .executeTakeFirst(),
  )
  return Number(result.numUpdatedRows) > 0
}

export async function deleteIdempotencyKey(
  store: Store,
  workspaceId: string,
  keyHash: string,
): Promise<void> {
  await store.writeOne(({ db }) =>
    db
      .deleteFrom('idempotency_keys')
      .where('workspace_id', '=', workspaceId)
      .where('key_hash', '=', keyHash)
      .execute(),
  )
}

export async function deleteExpiredIdempotencyKeys(store: Store, now: number): Promise<number> {
  const result = await store.write(({ db }) =>
    db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst(),
  )
  return Number(result.numDeletedRows)
}

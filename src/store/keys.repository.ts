import type { Kysely } from 'kysely'
import { defineStatement, type Statements } from './statements.js'
import type { ApiKeyRow, Database, NewApiKey, WorkspaceRow } from './tables.js'

type Db = Kysely<Database>

export async function insertWorkspace(db: Db, row: WorkspaceRow): Promise<WorkspaceRow> {
  return db.insertInto('workspaces').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function findWorkspaceByName(db: Db, name: string): Promise<WorkspaceRow | undefined> {
  return db.selectFrom('workspaces').selectAll().where('name', '=', name).executeTakeFirst()
}

export async function findWorkspaceById(db: Db, id: string): Promise<WorkspaceRow | undefined> {
  return db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst()
}

/** A workspace with how many of its keys work: neither revoked nor expired at `now`. */
export type WorkspaceListRow = WorkspaceRow & { active_keys: number }

/** Every workspace, oldest first, with its count of working keys. */
export async function listWorkspaces(db: Db, now: number): Promise<WorkspaceListRow[]> {
  const rows = await db
    .selectFrom('workspaces as w')
    .leftJoin('api_keys as k', (join) =>
      join
        .onRef('k.workspace_id', '=', 'w.id')
        .on('k.revoked_at', 'is', null)
        .on((eb) => eb.or([eb('k.expires_at', 'is', null), eb('k.expires_at', '>', now)])),
    )
    .select(['w.id', 'w.name', 'w.created', (eb) => eb.fn.count<number | string>('k.id').as('active_keys')])
    .groupBy(['w.id', 'w.name', 'w.created'])
    .orderBy('w.created')
    .orderBy('w.name')
    .execute()
  return rows.map((row) => ({ ...row, active_keys: Number(row.active_keys) }))
}

export async function countWorkspaces(db: Db): Promise<number> {
  const row = await db
    .selectFrom('workspaces')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function insertApiKey(db: Db, row: NewApiKey): Promise<ApiKeyRow> {
  return db.insertInto('api_keys').values(row).returningAll().executeTakeFirstOrThrow()
}

const findByHash = defineStatement('findApiKeyByHash', (db, p: { keyHash: string }) =>
  db.selectFrom('api_keys').selectAll().where('key_hash', '=', p.keyHash),
)

export async function findApiKeyByHash(
  statements: Statements,
  keyHash: string,
): Promise<ApiKeyRow | undefined> {
  return statements.first(findByHash, { keyHash })
}

/** One page of a workspace's keys in id order (UUIDv7: creation order), after `afterId`. */
export async function listApiKeysPage(
  db: Db,
  workspaceId: string,
  afterId: string | null,
  limit: number,
): Promise<ApiKeyRow[]> {
  let query = db.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId)
  if (afterId !== null) query = query.where('id', '>', afterId)
  return query.orderBy('id').limit(limit).execute()
}

export type ApiKeyListRow = ApiKeyRow & { workspace_name: string }

export async function listApiKeys(db: Db, workspaceId?: string): Promise<ApiKeyListRow[]> {
  let query = db
    .selectFrom('api_keys')
    .innerJoin('workspaces', 'workspaces.id', 'api_keys.workspace_id')
    .selectAll('api_keys')
    .select('workspaces.name as workspace_name')
    .orderBy('api_keys.created')
    .orderBy('api_keys.id')
  if (workspaceId !== undefined) query = query.where('api_keys.workspace_id', '=', workspaceId)
  return query.execute()
}

/** Marks a key revoked; returns false when no such key exists (or, with a workspace, not in it). */
export async function revokeApiKey(db: Db, id: string, at: number, workspaceId?: string): Promise<boolean> {
  let query = db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
  if (workspaceId !== undefined) query = query.where('workspace_id', '=', workspaceId)
  const result = await query.executeTakeFirst()
  if (Number(result.numUpdatedRows) > 0) return true
  // Revoking an already revoked key is not an error; only a missing key is.
  let existing = db.selectFrom('api_keys').select('id').where('id', '=', id)
  if (workspaceId !== undefined) existing = existing.where('workspace_id', '=', workspaceId)
  return (await existing.executeTakeFirst()) !== undefined
}

export async function reinstateApiKey(db: Db, id: string, scopes: string): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ revoked_at: null, expires_at: null, scopes })
    .where('id', '=', id)
    .execute()
}

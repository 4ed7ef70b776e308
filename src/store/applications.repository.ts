import type { Kysely, Updateable } from 'kysely'
import type { ApplicationRow, ApplicationsTable, Database, NewApplication } from './tables.js'

type Db = Kysely<Database>

export async function insertApplication(db: Db, row: NewApplication): Promise<ApplicationRow> {
  return db.insertInto('applications').values(row).returningAll().executeTakeFirstOrThrow()
}

/** With `lock`, the row stays locked until the surrounding transaction ends (PostgreSQL). */
export async function findApplication(
  db: Db,
  workspaceId: string,
  id: string,
  lock = false,
): Promise<ApplicationRow | undefined> {
  const query = db
    .selectFrom('applications')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
  return (lock ? query.forUpdate() : query).executeTakeFirst()
}

export async function applicationExists(db: Db, workspaceId: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('applications')
    .select('seq')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst()
  return row !== undefined
}

/** One page in creation order: the rows after `afterSeq`, at most `limit`. */
export async function listApplications(
  db: Db,
  workspaceId: string,
  afterSeq: number,
  limit: number,
): Promise<ApplicationRow[]> {
  return db
    .selectFrom('applications')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .execute()
}

/**
 * Writes a new version only if the row still carries `expectedEtag`; returns undefined when
 * another writer got there first.
 */
export async function updateApplication(
  db: Db,
  seq: number,
  expectedEtag: string,
  changes: Updateable<ApplicationsTable>,
): Promise<ApplicationRow | undefined> {
  return db
    .updateTable('applications')
    .set(changes)
    .where('seq', '=', seq)
    .where('etag', '=', expectedEtag)
    .returningAll()
    .executeTakeFirst()
}

/** Deletes the row (its policies and their revisions cascade) if it still carries `expectedEtag`. */
export async function deleteApplication(db: Db, seq: number, expectedEtag: string): Promise<boolean> {
  const result = await db
    .deleteFrom('applications')
    .where('seq', '=', seq)
    .where('etag', '=', expectedEtag)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

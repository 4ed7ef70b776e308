import type { Kysely, Updateable } from 'kysely'
import { type DocumentPage, findCompiled, runDocumentPage, runInsert } from './compiled.js'
import type { ApplicationRow, ApplicationsTable, Database, NewApplication } from './tables.js'

type Db = Kysely<Database>

const APPLICATION_COLUMNS = [
  'workspace_id',
  'id',
  'name',
  'description',
  'provider',
  'model',
  'parameters',
  'etag',
  'created',
  'updated',
  'doc',
] as const satisfies readonly (keyof NewApplication)[]

export async function insertApplication(db: Db, row: NewApplication): Promise<void> {
  await runInsert(db, 'applications', APPLICATION_COLUMNS, row)
}

/** The stored JSON text of one application and its entity tag: all a read sends. */
export async function findApplicationDocument(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<{ etag: string; doc: string } | undefined> {
  const build = () =>
    db.selectFrom('applications').select(['etag', 'doc']).where('workspace_id', '=', '').where('id', '=', '')
  return findCompiled(db, 'findApplicationDocument', build, [workspaceId, id])
}

/** With `lock`, the row stays locked until the surrounding transaction ends (PostgreSQL). */
export async function findApplication(
  db: Db,
  workspaceId: string,
  id: string,
  lock = false,
): Promise<ApplicationRow | undefined> {
  const query = (ws: string, app: string) =>
    db.selectFrom('applications').selectAll().where('workspace_id', '=', ws).where('id', '=', app)
  if (lock) return query(workspaceId, id).forUpdate().executeTakeFirst()
  return findCompiled(db, 'findApplication', () => query('', ''), [workspaceId, id])
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

/** One page in creation order, as stored JSON texts: the rows after `afterSeq`, at most `limit`. */
export async function listApplicationDocuments(
  db: Db,
  workspaceId: string,
  afterSeq: number,
  limit: number,
): Promise<DocumentPage> {
  const query = (columns: readonly ('seq' | 'doc')[]) =>
    db
      .selectFrom('applications')
      .select(columns)
      .where('workspace_id', '=', '')
      .where('seq', '>', 0)
      .orderBy('seq')
  return runDocumentPage(db, 'listApplicationDocuments', query, [workspaceId, afterSeq], limit)
}

/**
 * Writes a new version only if the row still carries `expectedEtag`; returns false when another
 * writer got there first.
 */
export async function updateApplication(
  db: Db,
  seq: number,
  expectedEtag: string,
  changes: Updateable<ApplicationsTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('applications')
    .set(changes)
    .where('seq', '=', seq)
    .where('etag', '=', expectedEtag)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
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

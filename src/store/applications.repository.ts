import type { Kysely, Updateable } from 'kysely'
import type { Store } from './database.js'
import { needsRowLocks } from './dialect.js'
import { type DocumentPage, findPrepared, runDocumentPage, runInsert } from './prepared-queries.js'
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

/** Stores a new application: one statement, atomic by itself, so it runs without a transaction. */
export const createApplication = (store: Store, row: NewApplication): Promise<void> =>
  store.writeOne((db) => insertApplication(db, row))

/** The stored JSON text of one application and its entity tag: all a read sends. */
export async function findApplicationDocument(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<{ etag: string; doc: string } | undefined> {
  const build = () =>
    db.selectFrom('applications').select(['etag', 'doc']).where('workspace_id', '=', '').where('id', '=', '')
  return findPrepared(db, 'findApplicationDocument', build, [workspaceId, id])
}

const selectApplication = (db: Db, workspaceId: string, id: string) =>
  db.selectFrom('applications').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id)

export async function findApplication(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<ApplicationRow | undefined> {
  return findPrepared(db, 'findApplication', () => selectApplication(db, '', ''), [workspaceId, id])
}

/**
 * Reads an application to change it, inside a write transaction: where the store needs it, the
 * row stays locked until the transaction ends.
 */
export async function findApplicationForUpdate(
  trx: Db,
  workspaceId: string,
  id: string,
): Promise<ApplicationRow | undefined> {
  const query = selectApplication(trx, workspaceId, id)
  return (needsRowLocks(trx) ? query.forUpdate() : query).executeTakeFirst()
}

export async function applicationExists(db: Db, workspaceId: string, id: string): Promise<boolean> {
  const build = () =>
    db.selectFrom('applications').select('seq').where('workspace_id', '=', '').where('id', '=', '')
  return (await findPrepared(db, 'applicationExists', build, [workspaceId, id])) !== undefined
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

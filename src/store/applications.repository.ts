import type { Kysely, Updateable } from 'kysely'
import type { Store, StoreTransaction } from './database.js'
import { needsRowLocks } from './dialect.js'
import {
  type DocumentPage,
  defineInsert,
  definePage,
  defineStatement,
  type Statements,
} from './statements.js'
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

const insert = defineInsert<NewApplication>('insertApplication', 'applications', APPLICATION_COLUMNS)

export async function insertApplication(statements: Statements, row: NewApplication): Promise<void> {
  await statements.run(insert, row)
}

/** Stores a new application: one statement, atomic by itself, so it runs without a transaction. */
export const createApplication = (store: Store, row: NewApplication): Promise<void> =>
  store.writeOne((tx) => insertApplication(tx.statements, row))

/** An application by its workspace and id. */
interface ApplicationKey {
  workspaceId: string
  id: string
}

const selectApplication = (db: Db, key: ApplicationKey) =>
  db.selectFrom('applications').where('workspace_id', '=', key.workspaceId).where('id', '=', key.id)

const findDocument = defineStatement('findApplicationDocument', (db, key: ApplicationKey) =>
  selectApplication(db, key).select(['etag', 'doc']),
)

/** The stored JSON text of one application and its entity tag: all a read sends. */
export async function findApplicationDocument(
  statements: Statements,
  workspaceId: string,
  id: string,
): Promise<{ etag: string; doc: string } | undefined> {
  return statements.first(findDocument, { workspaceId, id })
}

const find = defineStatement('findApplication', (db, key: ApplicationKey) =>
  selectApplication(db, key).selectAll(),
)

export async function findApplication(
  statements: Statements,
  workspaceId: string,
  id: string,
): Promise<ApplicationRow | undefined> {
  return statements.first(find, { workspaceId, id })
}

/** The sequence of an application's row: what its policies' and log entries' rows refer to. */
export const findApplicationSeqStatement = defineStatement('findApplicationSeq', (db, key: ApplicationKey) =>
  selectApplication(db, key).select('seq'),
)

/**
 * Reads an application to change it, inside a write transaction: where the store needs it, the
 * row stays locked until the transaction ends.
 */
export async function findApplicationForUpdate(
  tx: Pick<StoreTransaction, 'db' | 'dialect'>,
  workspaceId: string,
  id: string,
): Promise<ApplicationRow | undefined> {
  const query = selectApplication(tx.db, { workspaceId, id }).selectAll()
  return (needsRowLocks(tx.dialect) ? query.forUpdate() : query).executeTakeFirst()
}

export async function applicationExists(
  statements: Statements,
  workspaceId: string,
  id: string,
): Promise<boolean> {
  return (await statements.first(findApplicationSeqStatement, { workspaceId, id })) !== undefined
}

const listPage = definePage(
  'listApplicationDocuments',
  (db, p: { workspaceId: string; afterSeq: number }, columns) =>
    db
      .selectFrom('applications')
      .select(columns)
      .where('workspace_id', '=', p.workspaceId)
      .where('seq', '>', p.afterSeq)
      .orderBy('seq'),
)

/** One page in creation order, as stored JSON texts: the rows after `afterSeq`, at most `limit`. */
export async function listApplicationDocuments(
  statements: Statements,
  workspaceId: string,
  afterSeq: number,
  limit: number,
): Promise<DocumentPage> {
  return statements.page(listPage, { workspaceId, afterSeq }, limit)
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

import type { Insertable, Kysely, Updateable } from 'kysely'
import type { Store, StoreTransaction } from './database.js'
import { needsRowLocks } from './dialect.js'
import {
  type DocumentPage,
  defineInsert,
  definePage,
  defineStatement,
  type Statements,
} from './statements.js'
import type {
  Database,
  NewPolicy,
  PoliciesTable,
  PolicyRevisionRow,
  PolicyRevisionsTable,
  PolicyRow,
} from './tables.js'

type Db = Kysely<Database>

const CONTENT_COLUMNS = ['rules', 'target', 'definition', 'override_response', 'mode', 'on_error'] as const

const POLICY_COLUMNS = [
  'workspace_id',
  'application_id',
  'id',
  ...CONTENT_COLUMNS,
  'revision',
  'etag',
  'created',
  'updated',
  'doc',
] as const satisfies readonly (keyof NewPolicy)[]

const REVISION_COLUMNS = [
  'workspace_id',
  'application_id',
  'policy_id',
  'revision',
  ...CONTENT_COLUMNS,
  'created',
] as const satisfies readonly (keyof PolicyRevisionsTable)[]

const insert = defineInsert<NewPolicy>('insertPolicy', 'policies', POLICY_COLUMNS)

export async function insertPolicy(statements: Statements, row: NewPolicy): Promise<void> {
  await statements.run(insert, row)
}

/**
 * Stores a new policy: one statement, atomic by itself, so it runs without a transaction. A
 * missing application fails it on its foreign key.
 */
export const createPolicy = (store: Store, row: NewPolicy): Promise<void> =>
  store.writeOne((tx) => insertPolicy(tx.statements, row))

const insertRevision = defineInsert<Insertable<PolicyRevisionsTable>>(
  'insertPolicyRevision',
  'policy_revisions',
  REVISION_COLUMNS,
)

/** Keeps a version a policy has just moved past: the current one lives in the policy row. */
export async function insertPolicyRevision(
  statements: Statements,
  row: Insertable<PolicyRevisionsTable>,
): Promise<void> {
  await statements.run(insertRevision, row)
}

/**
 * Deletes revision rows that repeat their policy's current version: stores made before
 * migration 0004 and imported exports hold one for every policy.
 */
export async function deleteCurrentRevisionRows(db: Db): Promise<void> {
  await db
    .deleteFrom('policy_revisions')
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('policies')
          .select('policies.seq')
          .whereRef('policies.workspace_id', '=', 'policy_revisions.workspace_id')
          .whereRef('policies.application_id', '=', 'policy_revisions.application_id')
          .whereRef('policies.id', '=', 'policy_revisions.policy_id')
          .whereRef('policies.revision', '=', 'policy_revisions.revision'),
      ),
    )
    .execute()
}

/** A policy by its workspace, application and id. */
interface PolicyKey {
  workspaceId: string
  applicationId: string
  id: string
}

const selectPolicy = (db: Db, key: PolicyKey) =>
  db
    .selectFrom('policies')
    .where('workspace_id', '=', key.workspaceId)
    .where('application_id', '=', key.applicationId)
    .where('id', '=', key.id)

const findDocument = defineStatement('findPolicyDocument', (db, key: PolicyKey) =>
  selectPolicy(db, key).select(['etag', 'doc']),
)

/** The stored JSON text of one policy and its entity tag: all a read sends. */
export async function findPolicyDocument(
  statements: Statements,
  workspaceId: string,
  applicationId: string,
  id: string,
): Promise<{ etag: string; doc: string } | undefined> {
  return statements.first(findDocument, { workspaceId, applicationId, id })
}

const find = defineStatement('findPolicy', (db, key: PolicyKey) => selectPolicy(db, key).selectAll())

export async function findPolicy(
  statements: Statements,
  workspaceId: string,
  applicationId: string,
  id: string,
): Promise<PolicyRow | undefined> {
  return statements.first(find, { workspaceId, applicationId, id })
}

/**
 * Reads a policy to change it, inside a write transaction: where the store needs it, the row
 * stays locked until the transaction ends.
 */
export async function findPolicyForUpdate(
  tx: Pick<StoreTransaction, 'db' | 'dialect'>,
  workspaceId: string,
  applicationId: string,
  id: string,
): Promise<PolicyRow | undefined> {
  const query = selectPolicy(tx.db, { workspaceId, applicationId, id }).selectAll()
  return (needsRowLocks(tx.dialect) ? query.forUpdate() : query).executeTakeFirst()
}

const listPage = definePage(
  'listPolicyDocuments',
  (db, p: { workspaceId: string; applicationId: string; afterSeq: number }, columns) =>
    db
      .selectFrom('policies')
      .select(columns)
      .where('workspace_id', '=', p.workspaceId)
      .where('application_id', '=', p.applicationId)
      .where('seq', '>', p.afterSeq)
      .orderBy('seq'),
)

/** One page of an application's policies in creation order, as stored JSON texts. */
export async function listPolicyDocuments(
  statements: Statements,
  workspaceId: string,
  applicationId: string,
  afterSeq: number,
  limit: number,
): Promise<DocumentPage> {
  return statements.page(listPage, { workspaceId, applicationId, afterSeq }, limit)
}

/** Writes a new version only if the row still carries `expectedEtag`. */
export async function updatePolicy(
  db: Db,
  seq: number,
  expectedEtag: string,
  changes: Updateable<PoliciesTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('policies')
    .set(changes)
    .where('seq', '=', seq)
    .where('etag', '=', expectedEtag)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Deletes the policy (its revisions cascade) if it still carries `expectedEtag`. */
export async function deletePolicy(db: Db, seq: number, expectedEtag: string): Promise<boolean> {
  const result = await db
    .deleteFrom('policies')
    .where('seq', '=', seq)
    .where('etag', '=', expectedEtag)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

export interface RevisionKey {
  workspaceId: string
  applicationId: string
  policyId: string
}

/** Stored (past) revisions newest first, those below `beforeRevision`, at most `limit`. */
export async function listPolicyRevisions(
  db: Db,
  key: RevisionKey,
  beforeRevision: number,
  limit: number,
): Promise<PolicyRevisionRow[]> {
  return db
    .selectFrom('policy_revisions')
    .selectAll()
    .where('workspace_id', '=', key.workspaceId)
    .where('application_id', '=', key.applicationId)
    .where('policy_id', '=', key.policyId)
    .where('revision', '<', beforeRevision)
    .orderBy('revision', 'desc')
    .limit(limit)
    .execute()
}

export async function findPolicyRevision(
  db: Db,
  key: RevisionKey,
  revision: number,
): Promise<PolicyRevisionRow | undefined> {
  return db
    .selectFrom('policy_revisions')
    .selectAll()
    .where('workspace_id', '=', key.workspaceId)
    .where('application_id', '=', key.applicationId)
    .where('policy_id', '=', key.policyId)
    .where('revision', '=', revision)
    .executeTakeFirst()
}

/** A policy row by its sequence number. */
export async function findPolicyBySeq(db: Db, seq: number): Promise<PolicyRow | undefined> {
  return db.selectFrom('policies').selectAll().where('seq', '=', seq).executeTakeFirst()
}

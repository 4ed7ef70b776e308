import type { Insertable, Kysely } from 'kysely'
import type { Database, NewPolicy, PolicyRevisionsTable, PolicyRow } from './tables.js'

type Db = Kysely<Database>

export async function insertPolicy(db: Db, row: NewPolicy): Promise<PolicyRow> {
  return db.insertInto('policies').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function insertPolicyRevision(db: Db, row: Insertable<PolicyRevisionsTable>): Promise<void> {
  await db.insertInto('policy_revisions').values(row).execute()
}

export async function findPolicy(
  db: Db,
  workspaceId: string,
  applicationId: string,
  id: string,
): Promise<PolicyRow | undefined> {
  return db
    .selectFrom('policies')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('application_id', '=', applicationId)
    .where('id', '=', id)
    .executeTakeFirst()
}

import type { Kysely } from 'kysely'
import type { ApplicationRow, Database, NewApplication } from './tables.js'

type Db = Kysely<Database>

export async function insertApplication(db: Db, row: NewApplication): Promise<ApplicationRow> {
  return db.insertInto('applications').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function findApplication(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<ApplicationRow | undefined> {
  return db
    .selectFrom('applications')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst()
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

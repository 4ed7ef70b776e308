import { type Kysely, type Migration, sql } from 'kysely'

/**
 * A policy's current version is kept once, in its row; revision rows hold past versions only, so
 * the rows that repeat a policy's current version go. Frozen: never edit.
 */
export function pastRevisionsOnly(): Migration {
  return {
    // biome-ignore lint/suspicious/noExplicitAny: a migration is typed against no schema of today
    async up(db: Kysely<any>) {
      await sql`
        delete from policy_revisions
        where exists (
          select 1 from policies p
          where p.workspace_id = policy_revisions.workspace_id
            and p.application_id = policy_revisions.application_id
            and p.id = policy_revisions.policy_id
            and p.revision = policy_revisions.revision
        )`.execute(db)
    },
  }
}

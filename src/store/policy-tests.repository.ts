import type { Kysely, Updateable } from 'kysely'
import { defineInsert, type Statements } from './statements.js'
import type { Database, NewPolicyTest, PolicyTestRow, PolicyTestsTable } from './tables.js'

type Db = Kysely<Database>

const TEST_COLUMNS = [
  'workspace_id',
  'application_id',
  'policy_id',
  'id',
  'name',
  'messages',
  'context',
  'expected',
  'etag',
  'created',
  'updated',
] as const satisfies readonly (keyof NewPolicyTest)[]

/** The policy a test case belongs to. */
export interface PolicyKey {
  workspaceId: string
  applicationId: string
  policyId: string
}

const ofPolicy = (db: Db, key: PolicyKey) =>
  db
    .selectFrom('policy_tests')
    .where('workspace_id', '=', key.workspaceId)
    .where('application_id', '=', key.applicationId)
    .where('policy_id', '=', key.policyId)

const insert = defineInsert<NewPolicyTest>('insertPolicyTest', 'policy_tests', TEST_COLUMNS)

export async function insertPolicyTest(statements: Statements, row: NewPolicyTest): Promise<void> {
  await statements.run(insert, row)
}

export async function countPolicyTests(db: Db, key: PolicyKey): Promise<number> {
  const row = await ofPolicy(db, key)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function findPolicyTest(db: Db, key: PolicyKey, id: string): Promise<PolicyTestRow | undefined> {
  return ofPolicy(db, key).selectAll().where('id', '=', id).executeTakeFirst()
}

/** One page in creation order: the cases after `afterSeq`, at most `limit`. */
export async function listPolicyTests(
  db: Db,
  key: PolicyKey,
  afterSeq: number,
  limit: number,
): Promise<PolicyTestRow[]> {
  return ofPolicy(db, key).selectAll().where('seq', '>', afterSeq).orderBy('seq').limit(limit).execute()
}

/** Every case of a policy, in creation order (a policy holds at most a thousand). */
export async function listAllPolicyTests(db: Db, key: PolicyKey): Promise<PolicyTestRow[]> {
  return ofPolicy(db, key).selectAll().orderBy('seq').execute()
}

/**
 * Which cases a policy has, and which version of each: compared before and after a test run to
 * tell whether the cases changed meanwhile.
 */
export async function policyTestVersions(db: Db, key: PolicyKey): Promise<string> {
  return testVersions(await ofPolicy(db, key).select(['seq', 'etag']).orderBy('seq').execute())
}

/** The versions of cases already read, in creation order, as `policyTestVersions` gives them. */
export const testVersions = (rows: readonly { seq: number; etag: string }[]): string =>
  rows.map((row) => `${row.seq}:${row.etag}`).join(',')

/** Writes a new version only if the row still carries `expectedEtag`. */
export async function updatePolicyTest(
  db: Db,
  seq: number,
  expectedEtag: string,
  changes: Updateable<PolicyTestsTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('policy_tests')
    .set(changes)
    .where('seq', '=', seq)
    .where('etag', '=', expectedEtag)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Deletes the case if it still carries `expectedEtag`. */
export async function deletePolicyTest(db: Db, seq: number, expectedEtag: string): Promise<boolean> {
  const result = await db
    .deleteFrom('policy_tests')
    .where('seq', '=', seq)
    .where('etag', '=', expectedEtag)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

import { type Kysely, type SelectQueryBuilder, sql } from 'kysely'
import { findApplicationSeqStatement } from './applications.repository.js'
import { defineStatement, type Statements, type Utf8Text } from './statements.js'
import type { Database, EvaluationsTable } from './tables.js'

type Db = Kysely<Database>

/** One entry to log: the answer as the API shows it, and what the filters read. */
export interface NewEvaluationEntry {
  /** The application's row (`findEvaluatedApplication`, `findApplicationSeq`). */
  appSeq: number
  id: string
  created: number
  verdict: string
  /** What asked (`EvaluationSource`). */
  source: string
  /** Every policy id the evaluation evaluated, once each. */
  policyIds: readonly string[]
  doc: string
}

/**
 * An entry as the evaluation log writes it: its JSON text, or that text's UTF-8 bytes as the
 * evaluation pool's worker wrote them, which move to SQLite's writer thread without a copy
 * (`Utf8Text`) and are stored as the same text.
 */
export type LogEntryRow = Omit<NewEvaluationEntry, 'doc'> & { doc: string | Utf8Text }

type EntryRow = Pick<EvaluationsTable, 'app_seq' | 'id' | 'created' | 'verdict' | 'source'> & {
  doc: string | Utf8Text
}

/** `doc` is cast to text: UTF-8 bytes (a blob on SQLite) are stored as the text they are. */
const insertEntry = defineStatement('insertEvaluation', (db, p: EntryRow) =>
  db.insertInto('evaluations').values({
    app_seq: p.app_seq,
    id: p.id,
    created: p.created,
    verdict: p.verdict,
    source: p.source,
    doc: sql<string>`cast(${p.doc} as text)`,
  }),
)

/** Files one entry under one policy: the entry is found by its id, so no statement returns its sequence. */
const insertPolicyRow = defineStatement('insertEvaluationPolicy', (db, p: { policyId: string; id: string }) =>
  db
    .insertInto('evaluation_policies')
    .columns(['seq', 'policy_id', 'app_seq', 'created', 'verdict'])
    .expression((eb) =>
      eb
        .selectFrom('evaluations')
        .select((s) => ['seq', s.val(p.policyId).as('policy_id'), 'app_seq', 'created', 'verdict'])
        .where('id', '=', p.id),
    ),
)

/**
 * Logs one evaluation: its row, and a row per policy it evaluated. Run it inside a write
 * (`store.write`): on SQLite, inside the group commit, the statements are sent to the writer's
 * connection without waiting; building each with Kysely cost more than running it.
 */
export async function insertEvaluation(statements: Statements, entry: LogEntryRow): Promise<void> {
  await statements.run(insertEntry, {
    app_seq: entry.appSeq,
    id: entry.id,
    created: entry.created,
    verdict: entry.verdict,
    source: entry.source,
    doc: entry.doc,
  })
  for (const policyId of entry.policyIds) await statements.run(insertPolicyRow, { policyId, id: entry.id })
}

/** Which version of a policy is current: its row's sequence and its revision. */
export interface PolicyVersion {
  seq: number
  id: string
  revision: number
}

const findEvaluated = defineStatement(
  'findEvaluatedApplication',
  (db, p: { workspaceId: string; applicationId: string }) =>
    db
      .selectFrom('applications as a')
      .leftJoin('policies as p', (join) =>
        join.onRef('p.workspace_id', '=', 'a.workspace_id').onRef('p.application_id', '=', 'a.id'),
      )
      .select(['a.seq as app_seq', 'p.seq', 'p.id', 'p.revision'])
      .where('a.workspace_id', '=', p.workspaceId)
      .where('a.id', '=', p.applicationId)
      .orderBy('p.seq'),
)

/**
 * What an evaluation reads of the store: the application's row sequence (what its log entry is
 * filed under) and which revision of each of its policies is current, in creation order, in one
 * query; undefined when the workspace has no such application.
 */
export async function findEvaluatedApplication(
  statements: Statements,
  workspaceId: string,
  applicationId: string,
): Promise<{ appSeq: number; versions: PolicyVersion[] } | undefined> {
  const rows = await statements.all(findEvaluated, { workspaceId, applicationId })
  const first = rows[0]
  if (!first) return undefined
  const versions: PolicyVersion[] = []
  for (const row of rows)
    if (row.seq !== null && row.id !== null && row.revision !== null)
      versions.push({ seq: row.seq, id: row.id, revision: row.revision })
  return { appSeq: first.app_seq, versions }
}

/** The sequence of an application's row: what its log entries are filed under. */
export async function findApplicationSeq(
  statements: Statements,
  workspaceId: string,
  applicationId: string,
): Promise<number | undefined> {
  return (await statements.first(findApplicationSeqStatement, { workspaceId, id: applicationId }))?.seq
}

const findDocument = defineStatement('findEvaluationDocument', (db, p: { appSeq: number; id: string }) =>
  db.selectFrom('evaluations').select('doc').where('id', '=', p.id).where('app_seq', '=', p.appSeq),
)

/** One entry's stored text, if it belongs to the application. */
export async function findEvaluationDocument(
  statements: Statements,
  appSeq: number,
  id: string,
): Promise<string | undefined> {
  return (await statements.first(findDocument, { appSeq, id }))?.doc
}

/** A place in the log's order: newest first by `created`, then by `seq`. */
export interface LogPosition {
  created: number
  seq: number
}

export interface EvaluationFilters {
  verdict?: string | undefined
  source?: string | undefined
  policyId?: string | undefined
  /** Unix seconds, inclusive. */
  since?: number | undefined
  /** Unix seconds, inclusive. */
  until?: number | undefined
}

/** Up to `limit` stored texts and, when more follow, the position of the last one. */
export interface LogPage {
  docs: string[]
  last: LogPosition | null
}

/**
 * One page of an application's log, newest first, after `after`. Each filter combination is a
 * keyset scan of one index, read from its newest end: with a policy, the rows of
 * `evaluation_policies` for it (by verdict too when one is asked; and each its entry); else with a
 * source, that index; else with a verdict, that index; else the application's. A source with a
 * policy or a verdict is checked on the rows that index yields. The cursor condition bounds
 * `created` by itself first, so that it is a range of the index on both stores, and excludes the
 * rows at the same second it has already passed.
 */
export async function listEvaluationDocuments(
  db: Db,
  appSeq: number,
  filters: EvaluationFilters,
  after: LogPosition | null,
  limit: number,
): Promise<LogPage> {
  const { verdict, source, policyId, since, until } = filters
  // The table whose index orders the page: the policies' when filtering by policy.
  const k = policyId === undefined ? 'e' : 'p'
  const created = sql.ref<number>(`${k}.created`)
  const seq = sql.ref<number>(`${k}.seq`)
  let query = (
    policyId === undefined
      ? db.selectFrom('evaluations as e').where('e.app_seq', '=', appSeq)
      : db
          .selectFrom('evaluation_policies as p')
          .innerJoin('evaluations as e', 'e.seq', 'p.seq')
          .where('p.app_seq', '=', appSeq)
          .where('p.policy_id', '=', policyId)
  ) as SelectQueryBuilder<Database & { e: EvaluationsTable }, 'e', object>
  if (source !== undefined) query = query.where('e.source', '=', source)
  if (verdict !== undefined) query = query.where(sql.ref<string>(`${k}.verdict`), '=', verdict)
  if (since !== undefined) query = query.where(created, '>=', since)
  if (until !== undefined) query = query.where(created, '<=', until)
  if (after) {
    query = query
      .where(created, '<=', after.created)
      .where((eb) => eb.or([eb(created, '<', after.created), eb(seq, '<', after.seq)]))
  }
  const rows = await query
    .select(['e.seq', 'e.created', 'e.doc'])
    .orderBy(created, 'desc')
    .orderBy(seq, 'desc')
    .limit(limit + 1)
    .execute()
  const more = rows.length > limit
  const page = more ? rows.slice(0, limit) : rows
  const last = page[page.length - 1]
  return {
    docs: page.map((row) => row.doc),
    last: more && last ? { created: last.created, seq: last.seq } : null,
  }
}

/** The log's oldest entries by sequence, after `afterSeq`: where retention looks. */
export async function oldestEvaluations(db: Db, afterSeq: number, limit: number): Promise<LogPosition[]> {
  return db
    .selectFrom('evaluations')
    .select(['seq', 'created'])
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .execute()
}

/**
 * Deletes the entries with a sequence in `from..to` created before `cutoff`, and their policy
 * rows: two range deletes over primary keys. Run it inside a write.
 */
export async function deleteEvaluations(db: Db, from: number, to: number, cutoff: number): Promise<number> {
  await db
    .deleteFrom('evaluation_policies')
    .where('seq', '>=', from)
    .where('seq', '<=', to)
    .where('created', '<', cutoff)
    .execute()
  const result = await db
    .deleteFrom('evaluations')
    .where('seq', '>=', from)
    .where('seq', '<=', to)
    .where('created', '<', cutoff)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

/**
 * A page of the whole log in sequence order, with the workspace and application of each entry:
 * null for an entry whose application was deleted (it waits for retention).
 */
export async function evaluationsForExport(
  db: Db,
  afterSeq: number,
  limit: number,
): Promise<{ seq: number; workspace_id: string | null; application_id: string | null; doc: string }[]> {
  return db
    .selectFrom('evaluations as e')
    .leftJoin('applications as a', 'a.seq', 'e.app_seq')
    .select(['e.seq', 'a.workspace_id', 'a.id as application_id', 'e.doc'])
    .where('e.seq', '>', afterSeq)
    .orderBy('e.seq')
    .limit(limit)
    .execute()
}

/** Inserts many entries, in their order, with two multi-row statements. Run it inside a write. */
export async function insertEvaluationBatch(db: Db, entries: readonly NewEvaluationEntry[]): Promise<void> {
  if (entries.length === 0) return
  const inserted = await db
    .insertInto('evaluations')
    .values(
      entries.map((e) => ({
        app_seq: e.appSeq,
        id: e.id,
        created: e.created,
        verdict: e.verdict,
        source: e.source,
        doc: e.doc,
      })),
    )
    .returning(['seq', 'id'])
    .execute()
  const seqOf = new Map(inserted.map((row) => [row.id, row.seq]))
  const policies = entries.flatMap((e) =>
    e.policyIds.map((policyId) => ({
      seq: seqOf.get(e.id) as number,
      policy_id: policyId,
      app_seq: e.appSeq,
      created: e.created,
      verdict: e.verdict,
    })),
  )
  // Five values a row: well under SQLite's limit of 32,766 bound values a statement.
  for (let i = 0; i < policies.length; i += 5000)
    await db
      .insertInto('evaluation_policies')
      .values(policies.slice(i, i + 5000))
      .execute()
}

import type { Kysely } from 'kysely'
import { EVALUATION_SOURCES, type EvaluationSource } from '../schemas/evaluations.js'
import {
  evaluationsForExport,
  findApplicationSeq,
  insertEvaluationBatch,
} from '../store/evaluations.repository.js'
import type { Statements } from '../store/statements.js'
import type { Database } from '../store/tables.js'

/**
 * The evaluation log in `warden export` and `warden import`: one line per entry,
 * `{"kind": "evaluation", "workspace_id", "application_id", "entry": <the entry as the API shows
 * it>}`, after every other record and in the order entries were written, so that an import
 * recreates the same listing order. Entries of deleted applications are not exported.
 */

export const EVALUATION_KIND = 'evaluation'

const PAGE = 1000
const BATCH = 500

/** Writes every entry of the log; returns how many. */
export async function exportEvaluationLog(
  db: Kysely<Database>,
  write: (line: string) => Promise<void> | void,
): Promise<number> {
  let count = 0
  for (let after = 0; ; ) {
    const rows = await evaluationsForExport(db, after, PAGE)
    for (const row of rows) {
      if (row.workspace_id === null || row.application_id === null) continue
      // The stored text goes out as it is, inside the line: no parse and stringify per entry.
      await write(
        `{"kind":"${EVALUATION_KIND}","workspace_id":${JSON.stringify(row.workspace_id)},"application_id":${JSON.stringify(row.application_id)},"entry":${row.doc}}`,
      )
      count++
    }
    const last = rows[rows.length - 1]
    if (rows.length < PAGE || !last) return count
    after = last.seq
  }
}

interface EntryFields {
  id: string
  created: number
  verdict: string
  source: EvaluationSource
  policies: { id: string }[]
}

function entryFields(entry: unknown): EntryFields | undefined {
  const e = entry as Partial<EntryFields> | null
  if (e === null || typeof e !== 'object') return undefined
  if (typeof e.id !== 'string' || !Number.isSafeInteger(e.created)) return undefined
  if (e.verdict !== 'pass' && e.verdict !== 'fail') return undefined
  if (!(EVALUATION_SOURCES as readonly unknown[]).includes(e.source)) return undefined
  if (!Array.isArray(e.policies) || !e.policies.every((p) => typeof p?.id === 'string')) return undefined
  return e as EntryFields
}

/** Reads the log's lines of an import into a transaction, in batches. */
export class EvaluationLogImport {
  count = 0
  private batch: Parameters<typeof insertEvaluationBatch>[1][number][] = []
  private readonly applications = new Map<string, number | undefined>()

  /** `fail` turns a line's problem into the import's error. */
  constructor(
    private readonly trx: Kysely<Database>,
    private readonly statements: Statements,
    private readonly fail: (message: string) => Error,
  ) {}

  async add(record: Record<string, unknown>, lineNumber: number): Promise<void> {
    const { workspace_id: workspaceId, application_id: applicationId } = record
    const entry = entryFields(record.entry)
    if (typeof workspaceId !== 'string' || typeof applicationId !== 'string' || !entry)
      throw this.fail(`line ${lineNumber} is not an evaluation log entry`)
    const key = `${workspaceId}\0${applicationId}`
    if (!this.applications.has(key))
      this.applications.set(key, await findApplicationSeq(this.statements, workspaceId, applicationId))
    const appSeq = this.applications.get(key)
    if (appSeq === undefined)
      throw this.fail(
        `line ${lineNumber} is an evaluation of application "${applicationId}", which the export does not hold`,
      )
    this.batch.push({
      appSeq,
      id: entry.id,
      created: entry.created,
      verdict: entry.verdict,
      source: entry.source,
      policyIds: [...new Set(entry.policies.map((p) => p.id))],
      doc: JSON.stringify(record.entry),
    })
    this.count++
    if (this.batch.length >= BATCH) await this.flush()
  }

  async flush(): Promise<void> {
    const batch = this.batch
    this.batch = []
    await insertEvaluationBatch(this.trx, batch)
  }
}

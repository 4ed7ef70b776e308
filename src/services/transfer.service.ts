import type { Store } from '../store/database.js'
import { fromJson, toJson } from '../store/dialect.js'
import { rowDocument } from '../store/documents.js'
import { deleteCurrentRevisionRows } from '../store/policies.repository.js'
import { kyselyStatements } from '../store/statements.js'
import { pagesBySeq } from '../store/table-scan.js'
import type { Database } from '../store/tables.js'
import {
  allRowsByCreation,
  countWorkspaces,
  insertRows,
  revisionPages,
} from '../store/transfer.repository.js'
import { EVALUATION_KIND, EvaluationLogImport, exportEvaluationLog } from './evaluation-log-transfer.js'

/**
 * Moving a whole store (SQLite → PostgreSQL and back) as JSON lines: one header line, then every
 * workspace, API key (its hash only), application, policy, policy revision and policy test case,
 * parents before children and each table in creation order, so that an import recreates the same
 * listing order.
 */

export const EXPORT_FORMAT = 'warden-export'
export const EXPORT_VERSION = 1

type Kind = 'workspace' | 'api_key' | 'application' | 'policy' | 'policy_revision' | 'policy_test'
const TABLE = {
  workspace: 'workspaces',
  api_key: 'api_keys',
  application: 'applications',
  policy: 'policies',
  policy_revision: 'policy_revisions',
  policy_test: 'policy_tests',
} as const satisfies Record<Kind, keyof Database>
const ORDER: Kind[] = ['workspace', 'api_key', 'application', 'policy', 'policy_revision', 'policy_test']
/** Columns holding JSON: parsed on export, serialised again on import. */
const JSON_COLUMNS: Record<Kind, string[]> = {
  workspace: [],
  api_key: ['scopes'],
  application: ['parameters'],
  policy: ['rules', 'target'],
  policy_revision: ['rules', 'target'],
  policy_test: ['messages', 'context', 'expected'],
}

export class ImportError extends Error {}

export interface TransferOptions {
  /** false leaves the evaluation log out (`--skip-evaluation-log`). */
  evaluationLog?: boolean
}

type Row = Record<string, unknown>

/** jsonb keeps object keys in its own order; sort them so both stores export the same text. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Row)[k])]),
    )
  }
  return value
}

function exportRow(kind: Kind, row: Row): string {
  const { seq: _seq, doc: _doc, ...rest } = row
  for (const column of JSON_COLUMNS[kind]) {
    if (rest[column] !== null && rest[column] !== undefined) rest[column] = sortKeys(fromJson(rest[column]))
  }
  return JSON.stringify({ kind, ...rest })
}

/** A policy row's current version, as the export lists it: a revision written when it was. */
const currentRevision = (policy: Row): Row => ({
  workspace_id: policy.workspace_id,
  application_id: policy.application_id,
  policy_id: policy.id,
  revision: policy.revision,
  rules: policy.rules,
  target: policy.target,
  definition: policy.definition,
  override_response: policy.override_response,
  created: policy.updated,
})

export class TransferService {
  constructor(private readonly store: Store) {}

  /** Writes the whole store as JSON lines; returns how many records of each kind. */
  async export(
    write: (line: string) => Promise<void> | void,
    options: TransferOptions = {},
  ): Promise<Record<string, number>> {
    const counts = { workspace: 0, api_key: 0, application: 0, policy: 0, policy_revision: 0, policy_test: 0 }
    await write(
      JSON.stringify({
        kind: 'header',
        format: EXPORT_FORMAT,
        version: EXPORT_VERSION,
        exported: Date.now(),
      }),
    )
    for (const kind of ORDER) {
      if (kind === 'application' || kind === 'policy' || kind === 'policy_test') {
        // Creation order; `seq` itself is not exported.
        for await (const rows of pagesBySeq(this.store.db, TABLE[kind])) {
          for (const row of rows) await write(exportRow(kind, row))
          counts[kind] += rows.length
        }
        continue
      }
      if (kind === 'policy_revision') {
        for await (const rows of revisionPages(this.store.db)) {
          for (const row of rows) await write(exportRow(kind, row))
          counts[kind] += rows.length
        }
        // The current version of each policy lives in its row; the format lists it as a revision.
        for await (const rows of pagesBySeq(this.store.db, 'policies')) {
          for (const row of rows) await write(exportRow(kind, currentRevision(row)))
          counts[kind] += rows.length
        }
        continue
      }
      // Workspaces and keys: few rows.
      const rows = await allRowsByCreation(this.store.db, TABLE[kind] as 'workspaces' | 'api_keys')
      for (const row of rows) await write(exportRow(kind, row))
      counts[kind] += rows.length
    }
    // The evaluation log last: its entries name applications, and it is by far the largest part.
    if (options.evaluationLog === false) return counts
    return { ...counts, evaluation: await exportEvaluationLog(this.store.db, write) }
  }

  /**
   * Reads an export into this store, which must be empty, in one transaction: either every
   * record arrives or none does.
   */
  async import(lines: AsyncIterable<string>, options: TransferOptions = {}): Promise<Record<string, number>> {
    let evaluations = 0
    const counts = { workspace: 0, api_key: 0, application: 0, policy: 0, policy_revision: 0, policy_test: 0 }
    await this.store.db.transaction().execute(async (trx) => {
      const existing = await countWorkspaces(trx)
      if (existing > 0) {
        throw new ImportError(
          `the target store is not empty (${existing} workspaces); import into a new store, before its first start`,
        )
      }
      let batch: Row[] = []
      let batchKind: Kind | null = null
      const flush = async () => {
        if (batchKind && batch.length > 0) await insertRows(trx, TABLE[batchKind], batch)
        batch = []
      }
      const log = new EvaluationLogImport(
        trx,
        kyselyStatements(trx, this.store.dialect),
        (message) => new ImportError(message),
      )
      let lineNumber = 0
      let sawHeader = false
      for await (const raw of lines) {
        lineNumber++
        const line = raw.trim()
        if (line === '') continue
        let record: Row
        try {
          record = JSON.parse(line)
        } catch {
          throw new ImportError(`line ${lineNumber} is not JSON`)
        }
        if (!sawHeader) {
          if (
            record.kind !== 'header' ||
            record.format !== EXPORT_FORMAT ||
            record.version !== EXPORT_VERSION
          ) {
            throw new ImportError(`line 1 is not a ${EXPORT_FORMAT} version ${EXPORT_VERSION} header`)
          }
          sawHeader = true
          continue
        }
        if (record.kind === EVALUATION_KIND) {
          // Its application must be written first: the batch under way goes now.
          await flush()
          if (options.evaluationLog !== false) await log.add(record, lineNumber)
          continue
        }
        const kind = record.kind as Kind
        if (!ORDER.includes(kind))
          throw new ImportError(`line ${lineNumber} has an unknown kind "${String(record.kind)}"`)
        if (kind !== batchKind || batch.length >= 500) {
          await flush()
          batchKind = kind
        }
        const { kind: _kind, ...row } = record
        if (kind === 'application' || kind === 'policy') row.doc = rowDocument(TABLE[kind], row)
        for (const column of JSON_COLUMNS[kind]) {
          if (row[column] !== null && row[column] !== undefined) row[column] = toJson(row[column])
        }
        batch.push(row)
        counts[kind]++
      }
      if (!sawHeader) throw new ImportError('the input is empty')
      await flush()
      await log.flush()
      evaluations = log.count
      await deleteCurrentRevisionRows(trx)
    })
    return options.evaluationLog === false ? counts : { ...counts, evaluation: evaluations }
  }
}

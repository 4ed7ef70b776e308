import type { Kysely } from 'kysely'
import type { Application, ApplicationParameters } from '../schemas/applications.js'
import type { Policy, PolicyRule } from '../schemas/policies.js'
import { fromJson } from './dialect.js'
import { readStoreMetadata, updateDocument, writeStoreMetadata } from './documents.repository.js'
import { pagesBySeq } from './table-scan.js'
import type { ApplicationsTable, Database, PoliciesTable } from './tables.js'

/**
 * The JSON text the API shows for an application or a policy is made once, when the record is
 * written, and stored beside its columns (`doc`). A read sends that text as it is, and a page of
 * a list is those texts joined: no read parses, maps or serialises a record again. Keys come in
 * the order of the response schema, whatever order the client or the store used.
 */

/**
 * The version of the stored texts' shape (2: policies show `mode` and `on_error`). Change it whenever `applicationDocument` or
 * `policyDocument` changes what they write (a field added, renamed or reordered): start-up then
 * renders every stored text again (`refreshDocuments`).
 */
export const DOCUMENT_VERSION = 2

const VERSION_KEY = 'document_version'

/** The body of a read: the stored text and the entity tag of that version. */
export interface Stored {
  id: string
  etag: string
  json: string
}

const parametersInOrder = (p: ApplicationParameters | null): ApplicationParameters | null =>
  p === null
    ? null
    : {
        system_prompt: p.system_prompt,
        temperature: p.temperature,
        max_tokens: p.max_tokens,
        top_p: p.top_p,
        top_k: p.top_k,
      }

export function applicationDocument(a: Application): string {
  return JSON.stringify({
    id: a.id,
    name: a.name,
    description: a.description,
    provider: a.provider,
    model: a.model,
    parameters: parametersInOrder(a.parameters),
    created: a.created,
    updated: a.updated,
  } satisfies Application)
}

const ruleInOrder = (r: PolicyRule): PolicyRule => ({
  type: r.type,
  expected: r.expected,
  value: r.value,
  threshold: r.threshold,
  flagged: r.flagged,
  ...(r.detector !== undefined ? { detector: r.detector } : {}),
  ...(r.cascade !== undefined ? { cascade: { low: r.cascade.low, high: r.cascade.high } } : {}),
  ...(r.action !== undefined ? { action: r.action } : {}),
  ...(r.restore !== undefined ? { restore: r.restore } : {}),
  ...(r.allowed !== undefined ? { allowed: r.allowed } : {}),
})

export function policyDocument(p: Policy): string {
  return JSON.stringify({
    id: p.id,
    application_id: p.application_id,
    rules: p.rules.map(ruleInOrder),
    target: p.target,
    definition: p.definition,
    override_response: p.override_response,
    mode: p.mode,
    on_error: p.on_error,
    revision: p.revision,
    created: p.created,
    updated: p.updated,
  } satisfies Policy)
}

type Columns<T> = Omit<T, 'seq' | 'doc' | 'etag' | 'workspace_id'>

/** The application a row's columns describe. */
export function applicationFromColumns(row: Columns<ApplicationsTable>): Application {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    provider: row.provider,
    model: row.model,
    parameters: row.parameters === null ? null : fromJson<ApplicationParameters>(row.parameters),
    created: row.created,
    updated: row.updated,
  }
}

/** The policy a row's columns describe. */
export function policyFromColumns(row: Columns<PoliciesTable>): Policy {
  return {
    id: row.id,
    application_id: row.application_id,
    rules: fromJson<PolicyRule[]>(row.rules),
    target: fromJson<Policy['target']>(row.target),
    definition: row.definition,
    override_response: row.override_response,
    mode: row.mode === 'monitor' ? 'monitor' : 'enforce',
    on_error: row.on_error === 'fail_open' ? 'fail_open' : 'fail_closed',
    revision: row.revision,
    created: row.created,
    updated: row.updated,
  }
}

/** The stored text of a row of `applications` or `policies`, from its columns. */
export function rowDocument(table: 'applications' | 'policies', row: Record<string, unknown>): string {
  return table === 'applications'
    ? applicationDocument(applicationFromColumns(row as unknown as Columns<ApplicationsTable>))
    : policyDocument(policyFromColumns(row as unknown as Columns<PoliciesTable>))
}

/** A page of a list, from the stored texts of its records. */
export const pageJson = (documents: readonly string[], nextCursor: string | null): string =>
  `{"data":[${documents.join(',')}],"next_cursor":${nextCursor === null ? 'null' : JSON.stringify(nextCursor)}}`

/** Rows rendered per transaction: a big store is refreshed a page at a time. */
const REFRESH_BATCH = 500

/**
 * Renders again the stored text of every application and policy when the store's texts are of
 * another `DOCUMENT_VERSION` than this code's (or were never written: a store migrated from
 * before they existed), a batch per transaction, then records the version. Import renders its
 * rows through the same `rowDocument`. Returns how many texts were written.
 */
export async function refreshDocuments(db: Kysely<Database>): Promise<number> {
  if ((await readStoreMetadata(db, VERSION_KEY)) === String(DOCUMENT_VERSION)) return 0
  let written = 0
  for (const table of ['applications', 'policies'] as const) {
    for await (const rows of pagesBySeq(db, table, REFRESH_BATCH)) {
      await db.transaction().execute(async (trx) => {
        for (const row of rows) await updateDocument(trx, table, row.seq as number, rowDocument(table, row))
      })
      written += rows.length
    }
  }
  await writeStoreMetadata(db, VERSION_KEY, String(DOCUMENT_VERSION))
  return written
}

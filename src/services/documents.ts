import type { Application, ApplicationParameters } from '../schemas/applications.js'
import type { Policy, PolicyRule } from '../schemas/policies.js'
import { fromJson } from '../store/dialect.js'
import type { ApplicationsTable, PoliciesTable } from '../store/tables.js'

/**
 * The JSON text the API shows for an application or a policy is made once, when the record is
 * written, and stored beside its columns (`doc`). A read sends that text as it is, and a page of
 * a list is those texts joined: no read parses, maps or serialises a record again. Keys come in
 * the order of the response schema, whatever order the client or the store used.
 */

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
})

export function policyDocument(p: Policy): string {
  return JSON.stringify({
    id: p.id,
    application_id: p.application_id,
    rules: p.rules.map(ruleInOrder),
    target: p.target,
    definition: p.definition,
    override_response: p.override_response,
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

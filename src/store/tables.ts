import type { Generated, Insertable, Selectable } from 'kysely'

/** JSON columns are TEXT on SQLite and jsonb on PostgreSQL; writes pass JSON text, reads go through `fromJson`. */
export type JsonColumn = unknown

export interface WorkspacesTable {
  id: string
  name: string
  created: number
}

export interface ApiKeysTable {
  id: string
  workspace_id: string
  name: string | null
  /** SHA-256 of the secret, hex. The secret itself is never stored. */
  key_hash: string
  /** The first characters of the secret, to recognise a key in lists. */
  prefix: string
  scopes: JsonColumn
  created: number
  expires_at: number | null
  revoked_at: number | null
}

export interface ApplicationsTable {
  seq: Generated<number>
  workspace_id: string
  id: string
  name: string
  description: string
  provider: string | null
  model: string | null
  parameters: JsonColumn | null
  etag: string
  created: number
  updated: number
  /** The application as the API shows it, JSON text (services/documents.ts). */
  doc: string
}

export interface PoliciesTable {
  seq: Generated<number>
  workspace_id: string
  application_id: string
  id: string
  rules: JsonColumn
  target: JsonColumn
  definition: string | null
  override_response: string | null
  revision: number
  etag: string
  created: number
  updated: number
  /** The policy as the API shows it, JSON text (services/documents.ts). */
  doc: string
}

export interface PolicyRevisionsTable {
  workspace_id: string
  application_id: string
  policy_id: string
  revision: number
  rules: JsonColumn
  target: JsonColumn
  definition: string | null
  override_response: string | null
  created: number
}

export interface IdempotencyKeysTable {
  workspace_id: string
  key_hash: string
  fingerprint: string
  /** `running` while the first request is in flight, `done` once its 2xx answer is stored. */
  state: 'running' | 'done'
  /** The 2xx answer, encrypted under a key derived from the client's Idempotency-Key. */
  response: string | null
  created: number
  expires_at: number
}

export interface Database {
  idempotency_keys: IdempotencyKeysTable
  workspaces: WorkspacesTable
  api_keys: ApiKeysTable
  applications: ApplicationsTable
  policies: PoliciesTable
  policy_revisions: PolicyRevisionsTable
}

export type WorkspaceRow = Selectable<WorkspacesTable>
export type ApiKeyRow = Selectable<ApiKeysTable>
export type NewApiKey = Insertable<ApiKeysTable>
export type ApplicationRow = Selectable<ApplicationsTable>
export type NewApplication = Insertable<ApplicationsTable>
export type PolicyRow = Selectable<PoliciesTable>
export type NewPolicy = Insertable<PoliciesTable>
export type IdempotencyRow = Selectable<IdempotencyKeysTable>
export type PolicyRevisionRow = Selectable<PolicyRevisionsTable>

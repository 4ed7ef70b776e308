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
  /** The application as the API shows it, JSON text (store/documents.ts). */
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
  /** enforce or monitor; NULL means enforce. */
  mode: string | null
  /** fail_closed or fail_open; NULL means fail_closed. */
  on_error: string | null
  revision: number
  etag: string
  created: number
  updated: number
  /** The policy as the API shows it, JSON text (store/documents.ts). */
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
  /** enforce or monitor; NULL means enforce. */
  mode: string | null
  /** fail_closed or fail_open; NULL means fail_closed. */
  on_error: string | null
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

/** A policy's test case (migration 0008): a conversation and the verdict it must get. */
export interface PolicyTestsTable {
  seq: Generated<number>
  workspace_id: string
  application_id: string
  policy_id: string
  id: string
  name: string
  messages: JsonColumn
  context: JsonColumn | null
  /** `{"verdict", "rules"}`, as the API shows it. */
  expected: JsonColumn
  etag: string
  created: number
  updated: number
}

/** Facts about the store itself, by name (migration 0005). */
export interface StoreMetadataTable {
  name: string
  value: string
}

/** One evaluation log entry (migration 0007). */
export interface EvaluationsTable {
  seq: Generated<number>
  /** The evaluation's id, a UUIDv7. */
  id: string
  /** The application's `seq`: a log belongs to one application row, not to an id reused later. */
  app_seq: number
  created: number
  /** The evaluation's verdict, pass or fail. */
  verdict: string
  /** What asked: api, playground, chat_input, chat_output, responses_input or responses_output (null in no row since migration 0009). */
  source: string | null
  /** The entry as the API shows it, JSON text (services/evaluation-log.service.ts). */
  doc: string
}

/** Which policies an evaluation evaluated, for the policy_id filter (migration 0007). */
export interface EvaluationPoliciesTable {
  /** The evaluation's `seq`. */
  seq: number
  policy_id: string
  app_seq: number
  created: number
  /** The evaluation's verdict, for the policy and verdict filters together. */
  verdict: string
}

export interface Database {
  store_metadata: StoreMetadataTable
  idempotency_keys: IdempotencyKeysTable
  workspaces: WorkspacesTable
  api_keys: ApiKeysTable
  applications: ApplicationsTable
  policies: PoliciesTable
  policy_revisions: PolicyRevisionsTable
  policy_tests: PolicyTestsTable
  evaluations: EvaluationsTable
  evaluation_policies: EvaluationPoliciesTable
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
export type PolicyTestRow = Selectable<PolicyTestsTable>
export type NewPolicyTest = Insertable<PolicyTestsTable>

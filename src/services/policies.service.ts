import type { Kysely } from 'kysely'
import { conflict, invalid, notFound } from '../errors.js'
import type { Policy, PolicyCreate, PolicyPatch, PolicyRule } from '../schemas/policies.js'
import { applicationExists } from '../store/applications.repository.js'
import type { Store } from '../store/database.js'
import { fromJson, isForeignKeyViolation, isUniqueViolation, toJson, usesRowLocks } from '../store/dialect.js'
import {
  deletePolicy,
  findPolicy,
  findPolicyRevision,
  insertPolicy,
  insertPolicyRevision,
  listPolicies,
  listPolicyRevisions,
  type RevisionKey,
  updatePolicy,
} from '../store/policies.repository.js'
import type { Database, PolicyRevisionRow, PolicyRow } from '../store/tables.js'
import { applicationNotFound, assertSameId, newEtag, type Versioned } from './applications.service.js'
import { nowSeconds } from './clock.js'
import { decodeCursor, type Page, toPage } from './pagination.js'
import { assertIfMatch, preconditionFailed } from './preconditions.js'
import { checkRules, normalizeRule } from './rules.js'

export function toPolicy(row: PolicyRow): Versioned<Policy> {
  return {
    resource: {
      id: row.id,
      application_id: row.application_id,
      rules: fromJson<PolicyRule[]>(row.rules),
      target: fromJson<Policy['target']>(row.target),
      definition: row.definition,
      override_response: row.override_response,
      revision: row.revision,
      created: row.created,
      updated: row.updated,
    },
    etag: row.etag,
  }
}

/** A stored version, shown as the policy was then; `updated` is when that version was written. */
function revisionToPolicy(row: PolicyRevisionRow, created: number): Policy {
  return {
    id: row.policy_id,
    application_id: row.application_id,
    rules: fromJson<PolicyRule[]>(row.rules),
    target: fromJson<Policy['target']>(row.target),
    definition: row.definition,
    override_response: row.override_response,
    revision: row.revision,
    created,
    updated: row.created,
  }
}

const policyNotFound = (applicationId: string, id: string) =>
  notFound(`No policy "${id}" in application "${applicationId}"`)

interface PolicyContent {
  rules: PolicyRule[]
  target: Policy['target']
  definition: string | null
  override_response: string | null
}

/** Validation beyond the schema, the same for a create and for the result of a patch. */
function checkContent(content: PolicyContent): void {
  const errors = checkRules(content.rules, content.definition)
  if (errors.length > 0) throw invalid(errors)
}

type StoredContent = ReturnType<typeof storedContent>

const storedContent = (content: PolicyContent) => ({
  rules: toJson(content.rules),
  target: toJson(content.target),
  definition: content.definition,
  override_response: content.override_response,
})

export class PoliciesService {
  constructor(private readonly store: Store) {}

  /** Creates a policy and its first revision in one transaction. */
  async create(workspaceId: string, applicationId: string, input: PolicyCreate): Promise<Versioned<Policy>> {
    const content: PolicyContent = {
      rules: input.rules.map(normalizeRule),
      target: input.target,
      definition: input.definition ?? null,
      override_response: input.override_response ?? null,
    }
    checkContent(content)
    const stored = storedContent(content)
    const now = nowSeconds()
    try {
      const row = await this.store.write(async (trx) => {
        if (!(await applicationExists(trx, workspaceId, applicationId)))
          throw applicationNotFound(applicationId)
        const policy = await insertPolicy(trx, {
          workspace_id: workspaceId,
          application_id: applicationId,
          id: input.id,
          ...stored,
          revision: 1,
          etag: newEtag(),
          created: now,
          updated: now,
        })
        await this.recordRevision(trx, policy, stored)
        return policy
      })
      return toPolicy(row)
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw conflict(`A policy with id "${input.id}" already exists in application "${applicationId}"`)
      }
      // The application was deleted between the check and the insert.
      if (isForeignKeyViolation(error)) throw applicationNotFound(applicationId)
      throw error
    }
  }

  async get(workspaceId: string, applicationId: string, id: string): Promise<Versioned<Policy>> {
    const row = await findPolicy(this.store.db, workspaceId, applicationId, id)
    if (!row) throw await this.missing(this.store.db, workspaceId, applicationId, id)
    return toPolicy(row)
  }

  async list(
    workspaceId: string,
    applicationId: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<Policy>> {
    const after = decodeCursor(cursor) ?? 0
    if (!(await applicationExists(this.store.db, workspaceId, applicationId)))
      throw applicationNotFound(applicationId)
    const rows = await listPolicies(this.store.db, workspaceId, applicationId, after, limit + 1)
    return toPage(
      rows,
      limit,
      (row) => row.seq,
      (row) => toPolicy(row).resource,
    )
  }

  /**
   * Applies a JSON merge patch; the result is validated like a create. Read, check, write and the
   * new revision happen in one transaction with the row locked where the store needs it, so
   * revisions are numbered without gaps or duplicates however many writers race.
   */
  async patch(
    workspaceId: string,
    applicationId: string,
    id: string,
    patch: PolicyPatch,
    ifMatch: string | undefined,
  ): Promise<Versioned<Policy>> {
    assertSameId(patch.id, id)
    return this.store.write(async (trx) => {
      const row = await findPolicy(trx, workspaceId, applicationId, id, usesRowLocks(this.store.dialect))
      if (!row) throw await this.missing(trx, workspaceId, applicationId, id)
      assertIfMatch(ifMatch, row.etag)
      const current = toPolicy(row).resource
      const next: PolicyContent = {
        rules: patch.rules ? patch.rules.map(normalizeRule) : current.rules,
        target: patch.target ?? current.target,
        definition: patch.definition === undefined ? current.definition : patch.definition,
        override_response:
          patch.override_response === undefined ? current.override_response : patch.override_response,
      }
      checkContent(next)
      const { rules, target, definition, override_response } = current
      if (JSON.stringify(next) === JSON.stringify({ rules, target, definition, override_response })) {
        return toPolicy(row)
      }
      const stored = storedContent(next)
      const updated = await updatePolicy(trx, row.seq, row.etag, {
        ...stored,
        revision: row.revision + 1,
        etag: newEtag(),
        updated: Math.max(nowSeconds(), row.updated),
      })
      if (!updated) throw preconditionFailed()
      await this.recordRevision(trx, updated, stored)
      return toPolicy(updated)
    })
  }

  /** Deletes the policy and its whole history. */
  async delete(
    workspaceId: string,
    applicationId: string,
    id: string,
    ifMatch: string | undefined,
  ): Promise<void> {
    await this.store.write(async (trx) => {
      const row = await findPolicy(trx, workspaceId, applicationId, id, usesRowLocks(this.store.dialect))
      if (!row) throw await this.missing(trx, workspaceId, applicationId, id)
      assertIfMatch(ifMatch, row.etag)
      if (!(await deletePolicy(trx, row.seq, row.etag))) throw preconditionFailed()
    })
  }

  async listRevisions(
    workspaceId: string,
    applicationId: string,
    id: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<Policy>> {
    const before = decodeCursor(cursor) ?? Number.MAX_SAFE_INTEGER
    const policy = await findPolicy(this.store.db, workspaceId, applicationId, id)
    if (!policy) throw await this.missing(this.store.db, workspaceId, applicationId, id)
    const key: RevisionKey = { workspaceId, applicationId, policyId: id }
    const rows = await listPolicyRevisions(this.store.db, key, before, limit + 1)
    return toPage(
      rows,
      limit,
      (row) => row.revision,
      (row) => revisionToPolicy(row, policy.created),
    )
  }

  async getRevision(
    workspaceId: string,
    applicationId: string,
    id: string,
    revision: number,
  ): Promise<Policy> {
    const policy = await findPolicy(this.store.db, workspaceId, applicationId, id)
    if (!policy) throw await this.missing(this.store.db, workspaceId, applicationId, id)
    const row = await findPolicyRevision(
      this.store.db,
      { workspaceId, applicationId, policyId: id },
      revision,
    )
    if (!row) throw notFound(`Policy "${id}" has no revision ${revision}; its latest is ${policy.revision}`)
    return revisionToPolicy(row, policy.created)
  }

  /** Stores the version just written, reusing the JSON text the policy row was written with. */
  private async recordRevision(
    trx: Kysely<Database>,
    policy: PolicyRow,
    stored: StoredContent,
  ): Promise<void> {
    await insertPolicyRevision(trx, {
      workspace_id: policy.workspace_id,
      application_id: policy.application_id,
      policy_id: policy.id,
      revision: policy.revision,
      ...stored,
      created: policy.updated,
    })
  }

  /** Says which is missing: the application or the policy. */
  private async missing(db: Kysely<Database>, workspaceId: string, applicationId: string, id: string) {
    return (await applicationExists(db, workspaceId, applicationId))
      ? policyNotFound(applicationId, id)
      : applicationNotFound(applicationId)
  }
}

import type { Kysely } from 'kysely'
import { conflict, invalid, notFound } from '../errors.js'
import type { Policy, PolicyCreate, PolicyPatch, PolicyRule } from '../schemas/policies.js'
import { applicationExists } from '../store/applications.repository.js'
import type { Store } from '../store/database.js'
import { isForeignKeyViolation, isUniqueViolation, toJson, usesRowLocks } from '../store/dialect.js'
import {
  deletePolicy,
  findPolicy,
  findPolicyDocument,
  findPolicyRevision,
  insertPolicy,
  insertPolicyRevision,
  listPolicyDocuments,
  listPolicyRevisions,
  type RevisionKey,
  updatePolicy,
} from '../store/policies.repository.js'
import type { Database, PolicyRevisionRow } from '../store/tables.js'
import { applicationNotFound, assertSameId, newEtag } from './applications.service.js'
import { nowSeconds } from './clock.js'
import { policyDocument, policyFromColumns, type Stored } from './documents.js'
import { decodeCursor, documentPage, type Page, toPage } from './pagination.js'
import { assertIfMatch, preconditionFailed } from './preconditions.js'
import { checkRules, normalizeRule } from './rules.js'

/** A stored version, shown as the policy was then; `updated` is when that version was written. */
function revisionToPolicy(row: PolicyRevisionRow, created: number): Policy {
  return policyFromColumns({ ...row, id: row.policy_id, created, updated: row.created })
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

/** The columns of a policy row, with its stored text and entity tag. */
const columns = (p: Policy, content: StoredContent, stored: Stored) => ({
  id: p.id,
  application_id: p.application_id,
  ...content,
  revision: p.revision,
  etag: stored.etag,
  created: p.created,
  updated: p.updated,
  doc: stored.json,
})

const storedContent = (content: PolicyContent) => ({
  rules: toJson(content.rules),
  target: toJson(content.target),
  definition: content.definition,
  override_response: content.override_response,
})

export class PoliciesService {
  constructor(private readonly store: Store) {}

  /** Creates a policy and its first revision in one transaction. */
  async create(workspaceId: string, applicationId: string, input: PolicyCreate): Promise<Stored> {
    const content: PolicyContent = {
      rules: input.rules.map(normalizeRule),
      target: input.target,
      definition: input.definition ?? null,
      override_response: input.override_response ?? null,
    }
    checkContent(content)
    const now = nowSeconds()
    const policy: Policy = {
      id: input.id,
      application_id: applicationId,
      ...content,
      revision: 1,
      created: now,
      updated: now,
    }
    const stored = { id: input.id, etag: newEtag(), json: policyDocument(policy) }
    const columnsContent = storedContent(content)
    try {
      // One statement: a missing application fails the insert on its foreign key, no read first.
      await this.store.writeOne((trx) =>
        insertPolicy(trx, { workspace_id: workspaceId, ...columns(policy, columnsContent, stored) }),
      )
      return stored
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw conflict(`A policy with id "${input.id}" already exists in application "${applicationId}"`)
      }
      if (isForeignKeyViolation(error)) throw applicationNotFound(applicationId)
      throw error
    }
  }

  async get(workspaceId: string, applicationId: string, id: string): Promise<Stored> {
    const found = await findPolicyDocument(this.store.db, workspaceId, applicationId, id)
    if (!found) throw await this.missing(this.store.db, workspaceId, applicationId, id)
    return { id, etag: found.etag, json: found.doc }
  }

  /** One page, as the JSON text of the answer. */
  async list(workspaceId: string, applicationId: string, limit: number, cursor?: string): Promise<string> {
    const after = decodeCursor(cursor) ?? 0
    if (!(await applicationExists(this.store.db, workspaceId, applicationId)))
      throw applicationNotFound(applicationId)
    return documentPage(await listPolicyDocuments(this.store.db, workspaceId, applicationId, after, limit))
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
  ): Promise<Stored> {
    assertSameId(patch.id, id)
    return this.store.write(async (trx) => {
      const row = await findPolicy(trx, workspaceId, applicationId, id, usesRowLocks(this.store.dialect))
      if (!row) throw await this.missing(trx, workspaceId, applicationId, id)
      assertIfMatch(ifMatch, row.etag)
      const current = policyFromColumns(row)
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
        return { id, etag: row.etag, json: row.doc }
      }
      const policy: Policy = {
        ...current,
        ...next,
        revision: row.revision + 1,
        updated: Math.max(nowSeconds(), row.updated),
      }
      const stored = { id, etag: newEtag(), json: policyDocument(policy) }
      const content = storedContent(next)
      const {
        id: _id,
        application_id: _app,
        created: _created,
        ...changes
      } = columns(policy, content, stored)
      // The version being replaced becomes a past revision; the new one lives in the row.
      await insertPolicyRevision(trx, {
        workspace_id: workspaceId,
        application_id: applicationId,
        policy_id: id,
        revision: row.revision,
        ...storedContent(current),
        created: row.updated,
      })
      if (!(await updatePolicy(trx, row.seq, row.etag, changes))) throw preconditionFailed()
      return stored
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

  /** Every version, newest first: the current one from the policy row, past ones stored. */
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
    const versions = policy.revision < before ? [policyFromColumns(policy)] : []
    const key: RevisionKey = { workspaceId, applicationId, policyId: id }
    const past = await listPolicyRevisions(this.store.db, key, before, limit + 1 - versions.length)
    for (const row of past) versions.push(revisionToPolicy(row, policy.created))
    return toPage(
      versions,
      limit,
      (version) => version.revision,
      (version) => version,
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
    if (revision === policy.revision) return policyFromColumns(policy)
    const row = await findPolicyRevision(
      this.store.db,
      { workspaceId, applicationId, policyId: id },
      revision,
    )
    if (!row) throw notFound(`Policy "${id}" has no revision ${revision}; its latest is ${policy.revision}`)
    return revisionToPolicy(row, policy.created)
  }

  /** Says which is missing: the application or the policy. */
  private async missing(db: Kysely<Database>, workspaceId: string, applicationId: string, id: string) {
    return (await applicationExists(db, workspaceId, applicationId))
      ? policyNotFound(applicationId, id)
      : applicationNotFound(applicationId)
  }
}

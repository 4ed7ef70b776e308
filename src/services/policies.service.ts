import type { Clock } from '../clock.js'
import { conflict, invalid, notFound } from '../errors.js'
import { evaluablePolicy } from '../evaluation/policy-for-evaluation.js'
import type { RuleChecks } from '../evaluation/rule-checks.js'
import { normalizeRule } from '../rules/validation.js'
import type {
  OnError,
  Policy,
  PolicyCreate,
  PolicyMode,
  PolicyPatch,
  PolicyRule,
} from '../schemas/policies.js'
import { applicationExists } from '../store/applications.repository.js'
import type { Store } from '../store/database.js'
import { isForeignKeyViolation, isUniqueViolation, toJson } from '../store/dialect.js'
import { policyDocument, policyFromColumns, type Stored } from '../store/documents.js'
import {
  createPolicy,
  deletePolicy,
  findPolicy,
  findPolicyDocument,
  findPolicyForUpdate,
  findPolicyRevision,
  insertPolicyRevision,
  listPolicyDocuments,
  listPolicyRevisions,
  type RevisionKey,
  updatePolicy,
} from '../store/policies.repository.js'
import { policyTestVersions, testVersions } from '../store/policy-tests.repository.js'
import type { Statements } from '../store/statements.js'
import type { PolicyRevisionRow } from '../store/tables.js'
import { type PolicyTestsService, testsFailed } from './policy-tests.service.js'
import { decodeCursor, documentPage, type Page, toPage } from './support/pagination.js'
import { assertIfMatch, preconditionFailed } from './support/preconditions.js'
import { applicationNotFound, assertSameId, newEtag, policyNotFound } from './support/records.js'

/** A stored version, shown as the policy was then; `updated` is when that version was written. */
function revisionToPolicy(row: PolicyRevisionRow, created: number): Policy {
  return policyFromColumns({ ...row, id: row.policy_id, created, updated: row.created })
}

interface PolicyContent {
  rules: PolicyRule[]
  target: Policy['target']
  definition: string | null
  override_response: string | null
  mode: PolicyMode
  on_error: OnError
}

/** The content a merge patch gives `current`. */
function patched(current: Policy, patch: PolicyPatch): PolicyContent {
  return {
    rules: patch.rules ? patch.rules.map(normalizeRule) : current.rules,
    target: patch.target ?? current.target,
    definition: patch.definition === undefined ? current.definition : patch.definition,
    override_response:
      patch.override_response === undefined ? current.override_response : patch.override_response,
    mode: patch.mode === undefined ? current.mode : (patch.mode ?? 'enforce'),
    on_error: patch.on_error === undefined ? current.on_error : (patch.on_error ?? 'fail_closed'),
  }
}

/** What checking a policy's content reads: its rules and definition, as text to compare. */
const checkedPart = (content: PolicyContent) =>
  JSON.stringify({ rules: content.rules, definition: content.definition })

function sameContent(next: PolicyContent, current: Policy): boolean {
  const { rules, target, definition, override_response, mode, on_error } = current
  return (
    JSON.stringify(next) === JSON.stringify({ rules, target, definition, override_response, mode, on_error })
  )
}

/** The policy or its test cases changed while the cases ran: check again. */
class ChangedMeanwhile extends Error {}

/** How often a PATCH runs the tests again when the policy or its cases keep changing under it. */
const MAX_TEST_ATTEMPTS = 3

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
  mode: content.mode,
  on_error: content.on_error,
})

export class PoliciesService {
  constructor(
    private readonly deps: { store: Store; clock: Clock; checks: RuleChecks; tests?: PolicyTestsService },
  ) {}

  /** Validation beyond the schema, the same for a create and for the result of a patch. */
  private async checkContent(workspaceId: string, content: PolicyContent): Promise<void> {
    const errors = await this.deps.checks.check(workspaceId, content.rules, content.definition, '')
    if (errors.length > 0) throw invalid(errors)
  }

  /** Creates a policy and its first revision in one transaction. */
  async create(workspaceId: string, applicationId: string, input: PolicyCreate): Promise<Stored> {
    const content: PolicyContent = {
      rules: input.rules.map(normalizeRule),
      target: input.target,
      definition: input.definition ?? null,
      override_response: input.override_response ?? null,
      mode: input.mode ?? 'enforce',
      on_error: input.on_error ?? 'fail_closed',
    }
    await this.checkContent(workspaceId, content)
    const now = this.deps.clock.nowSeconds()
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
      await createPolicy(this.deps.store, {
        workspace_id: workspaceId,
        ...columns(policy, columnsContent, stored),
      })
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
    const { statements } = this.deps.store
    const found = await findPolicyDocument(statements, workspaceId, applicationId, id)
    if (!found) throw await this.missing(statements, workspaceId, applicationId, id)
    return { id, etag: found.etag, json: found.doc }
  }

  /** One page, as the JSON text of the answer. */
  async list(workspaceId: string, applicationId: string, limit: number, cursor?: string): Promise<string> {
    const after = decodeCursor(cursor) ?? 0
    const { statements } = this.deps.store
    if (!(await applicationExists(statements, workspaceId, applicationId)))
      throw applicationNotFound(applicationId)
    return documentPage(await listPolicyDocuments(statements, workspaceId, applicationId, after, limit))
  }

  /**
   * Applies a JSON merge patch; the result is validated like a create. A policy with test cases
   * runs them against the patched body first, and a failing case refuses the change (409
   * tests_failed) unless `skipTests`. The cases run before the write's transaction opens (a judge
   * may take seconds); the transaction then checks that the cases did not change meanwhile and
   * that the patch, applied to the policy as it now is, gives the content they ran against. When
   * either moved, the whole check runs again on what is current; an If-Match that no longer
   * holds is a 412 as always. The rules are checked before the transaction too (their patterns
   * may be compiled in the evaluation pool), and the transaction that they are still those.
   */
  async patch(
    workspaceId: string,
    applicationId: string,
    id: string,
    patch: PolicyPatch,
    ifMatch: string | undefined,
    options: { skipTests?: boolean } = {},
  ): Promise<Stored> {
    assertSameId(patch.id, id)
    const tests = options.skipTests ? undefined : this.deps.tests
    const key = { workspaceId, applicationId, policyId: id }
    const { statements } = this.deps.store
    for (let attempt = 1; ; attempt++) {
      const row = await findPolicy(statements, workspaceId, applicationId, id)
      if (!row) throw await this.missing(statements, workspaceId, applicationId, id)
      assertIfMatch(ifMatch, row.etag)
      const current = policyFromColumns(row)
      const next = patched(current, patch)
      await this.checkContent(workspaceId, next)
      const cases = tests ? await tests.listCases(key) : []
      if (tests && cases.length > 0 && !sameContent(next, current)) {
        const policy = evaluablePolicy({ ...current, ...next }, true)
        const results = await tests.runCases({ workspaceId, applicationId }, policy, cases)
        const failures = results.filter((result) => result.outcome === 'failed')
        if (failures.length > 0) throw testsFailed(failures, results.length)
      }
      try {
        return await this.write(workspaceId, applicationId, id, patch, ifMatch, {
          checked: checkedPart(next),
          content: cases.length > 0 ? JSON.stringify(next) : null,
          cases: tests ? testVersions(cases) : null,
        })
      } catch (error) {
        if (!(error instanceof ChangedMeanwhile)) throw error
        if (attempt === MAX_TEST_ATTEMPTS) throw preconditionFailed()
      }
    }
  }

  /**
   * Read, check, write and the new revision in one transaction with the row locked where the
   * store needs it, so revisions are numbered without gaps or duplicates however many writers
   * race. The rules and definition must still be the ones `checked` before it opened; the
   * cases (`cases`, when tests run) still the versions that ran, and (when there are any) the
   * content about to be written the one they ran against.
   */
  private write(
    workspaceId: string,
    applicationId: string,
    id: string,
    patch: PolicyPatch,
    ifMatch: string | undefined,
    tested: { checked: string; content: string | null; cases: string | null },
  ): Promise<Stored> {
    return this.deps.store.write(async (tx) => {
      const row = await findPolicyForUpdate(tx, workspaceId, applicationId, id)
      if (!row) throw await this.missing(tx.statements, workspaceId, applicationId, id)
      assertIfMatch(ifMatch, row.etag)
      const current = policyFromColumns(row)
      const next = patched(current, patch)
      if (checkedPart(next) !== tested.checked) throw new ChangedMeanwhile()
      if (tested.cases !== null) {
        const key = { workspaceId, applicationId, policyId: id }
        if ((await policyTestVersions(tx.db, key)) !== tested.cases) throw new ChangedMeanwhile()
        if (tested.content !== null && JSON.stringify(next) !== tested.content) throw new ChangedMeanwhile()
      }
      if (sameContent(next, current)) return { id, etag: row.etag, json: row.doc }
      const policy: Policy = {
        ...current,
        ...next,
        revision: row.revision + 1,
        updated: Math.max(this.deps.clock.nowSeconds(), row.updated),
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
      await insertPolicyRevision(tx.statements, {
        workspace_id: workspaceId,
        application_id: applicationId,
        policy_id: id,
        revision: row.revision,
        ...storedContent(current),
        created: row.updated,
      })
      if (!(await updatePolicy(tx.db, row.seq, row.etag, changes))) throw preconditionFailed()
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
    await this.deps.store.write(async (tx) => {
      const row = await findPolicyForUpdate(tx, workspaceId, applicationId, id)
      if (!row) throw await this.missing(tx.statements, workspaceId, applicationId, id)
      assertIfMatch(ifMatch, row.etag)
      if (!(await deletePolicy(tx.db, row.seq, row.etag))) throw preconditionFailed()
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
    const { db, statements } = this.deps.store
    const policy = await findPolicy(statements, workspaceId, applicationId, id)
    if (!policy) throw await this.missing(statements, workspaceId, applicationId, id)
    const versions = policy.revision < before ? [policyFromColumns(policy)] : []
    const key: RevisionKey = { workspaceId, applicationId, policyId: id }
    const past = await listPolicyRevisions(db, key, before, limit + 1 - versions.length)
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
    const { db, statements } = this.deps.store
    const policy = await findPolicy(statements, workspaceId, applicationId, id)
    if (!policy) throw await this.missing(statements, workspaceId, applicationId, id)
    if (revision === policy.revision) return policyFromColumns(policy)
    const row = await findPolicyRevision(db, { workspaceId, applicationId, policyId: id }, revision)
    if (!row) throw notFound(`Policy "${id}" has no revision ${revision}; its latest is ${policy.revision}`)
    return revisionToPolicy(row, policy.created)
  }

  /** Says which is missing: the application or the policy. */
  private async missing(statements: Statements, workspaceId: string, applicationId: string, id: string) {
    return (await applicationExists(statements, workspaceId, applicationId))
      ? policyNotFound(applicationId, id)
      : applicationNotFound(applicationId)
  }
}

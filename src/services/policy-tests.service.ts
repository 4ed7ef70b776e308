import { performance } from 'node:perf_hooks'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { v7 as uuidv7 } from 'uuid'
import type { Clock } from '../clock.js'
import { AppError, conflict, type FieldError, invalid, notFound } from '../errors.js'
import type { Evaluator } from '../evaluation/evaluator.js'
import type { Guards } from '../evaluation/guard-scorer.js'
import { evaluablePolicy, uncheckedDraft } from '../evaluation/policy-for-evaluation.js'
import type { RuleChecks } from '../evaluation/rule-checks.js'
import { countedVerdict, type EvaluablePolicy, NO_JUDGE, type PolicyResult } from '../rules/evaluate.js'
import type { Evaluation } from '../schemas/evaluations.js'
import type { ToolCall } from '../schemas/messages.js'
import type { PolicyCreate } from '../schemas/policies.js'
import {
  type Expected,
  MAX_TESTS_PER_POLICY,
  type Outcome,
  type PolicyTest,
  type PolicyTestCreate,
  type PolicyTestPatch,
  type PolicyTestResult,
  type PolicyTestRun,
  type PolicyTestRunRequest,
} from '../schemas/policy-tests.js'
import { applicationExists } from '../store/applications.repository.js'
import type { Store, StoreTransaction } from '../store/database.js'
import { fromJson, isUniqueViolation, toJson } from '../store/dialect.js'
import { pageJson, policyFromColumns, type Stored } from '../store/documents.js'
import { findPolicy, findPolicyForUpdate } from '../store/policies.repository.js'
import {
  countPolicyTests,
  deletePolicyTest,
  findPolicyTest,
  insertPolicyTest,
  listAllPolicyTests,
  listPolicyTests,
  type PolicyKey,
  updatePolicyTest,
} from '../store/policy-tests.repository.js'
import type { Statements } from '../store/statements.js'
import type { PolicyTestRow } from '../store/tables.js'
import { decodeCursor, encodeCursor } from './support/pagination.js'
import { assertIfMatch, preconditionFailed } from './support/preconditions.js'
import { applicationNotFound, assertSameId, newEtag, policyNotFound } from './support/records.js'

type Messages = PolicyTest['messages']

/** A tool call with its known keys first, in the schema's order, then the rest as sent. */
function toolCallInOrder(call: ToolCall): ToolCall {
  const { id, type, function: fn, custom, ...rest } = call
  const ordered: ToolCall = {}
  if (id !== undefined) ordered.id = id
  if (type !== undefined) ordered.type = type
  if (fn !== undefined) {
    const { name, arguments: args, ...more } = fn
    ordered.function = {
      ...(name !== undefined ? { name } : {}),
      ...(args !== undefined ? { arguments: args } : {}),
      ...more,
    }
  }
  if (custom !== undefined) ordered.custom = custom
  return Object.assign(ordered, rest)
}

/**
 * Messages with their keys in the schema's order, whatever order the store kept them in (a
 * PostgreSQL jsonb column orders them its own way): role, content, then the agent's fields a case
 * keeps (docs/agents.md): name, tool_calls, tool_call_id.
 */
const messagesInOrder = (messages: Messages): Messages =>
  messages.map((m) => {
    const message: Messages[number] = {
      role: m.role,
      content:
        typeof m.content === 'string' ? m.content : m.content.map((p) => ({ type: p.type, text: p.text })),
    }
    if (m.name !== undefined) message.name = m.name
    if (m.tool_calls !== undefined) message.tool_calls = m.tool_calls.map(toolCallInOrder)
    if (m.tool_call_id !== undefined) message.tool_call_id = m.tool_call_id
    return message
  })

const expectedInOrder = (e: { verdict: Expected['verdict']; rules?: Expected['rules'] }): Expected => ({
  verdict: e.verdict,
  rules: e.rules ? e.rules.map((r) => ({ index: r.index, status: r.status })) : null,
})

/** A stored case as the API shows it. */
function testFromRow(row: PolicyTestRow): PolicyTest {
  return {
    id: row.id,
    application_id: row.application_id,
    policy_id: row.policy_id,
    name: row.name,
    messages: messagesInOrder(fromJson<Messages>(row.messages)),
    context: row.context === null ? null : fromJson<string[]>(row.context),
    expected: expectedInOrder(fromJson<Expected>(row.expected)),
    created: row.created,
    updated: row.updated,
  }
}

/** Each rule index listed at most once. */
function checkExpected(expected: Expected, pointer: string): void {
  const seen = new Set<number>()
  const errors: FieldError[] = []
  for (const [i, rule] of (expected.rules ?? []).entries()) {
    if (seen.has(rule.index))
      errors.push({ pointer: `${pointer}/rules/${i}/index`, detail: `repeats rule index ${rule.index}` })
    seen.add(rule.index)
  }
  if (errors.length > 0) throw invalid(errors)
}

const needsJudge = (rule: PolicyResult['rules'][number]) =>
  rule.status === 'error' && rule.reason === NO_JUDGE

/**
 * Whether a case passed. A case fails only on what a judge could not have changed; a mismatch
 * that a rule waiting for the missing judge could have decided either way makes it `skipped`.
 */
export function judgeOutcome(expected: Expected, result: PolicyResult): Outcome {
  let undecided = false
  for (const listed of expected.rules ?? []) {
    const actual = result.rules[listed.index]
    if (actual === undefined) return 'failed'
    if (actual.status === listed.status) continue
    if (needsJudge(actual)) undecided = true
    else return 'failed'
  }
  // A monitoring policy is judged as if it enforced.
  if (countedVerdict(result) !== expected.verdict) {
    // Only errors (no unsatisfied rule) make the verdict; a judge could have turned them either way.
    if (result.verdict === 'error' && result.rules.some(needsJudge)) undecided = true
    else return 'failed'
  }
  return undecided ? 'skipped' : 'passed'
}

/** The 409 a policy change gets when it breaks stored cases. */
export function testsFailed(failures: PolicyTestResult[], total: number): AppError {
  const n = failures.length
  return new AppError(
    'tests_failed',
    `The change breaks ${n} of the policy's ${total} test case${total === 1 ? '' : 's'} (see failures); fix the change or the cases, or send ?skip_tests=true`,
    undefined,
    undefined,
    { failures },
  )
}

/** How long a test run's cases on the event loop run before it gives other requests a turn. */
const TEST_RUN_SLICE_MS = 10

export class PolicyTestsService {
  constructor(
    private readonly deps: {
      store: Store
      clock: Clock
      /** The one evaluation core, which evaluates every case. */
      evaluator: Evaluator
      /** The guard detectors configured; none: null. */
      guards?: Guards | null
      checks: RuleChecks
    },
  ) {}

  /**
   * A draft body, validated exactly like a create (pointers under /draft), its patterns checked
   * where that is cheap (RuleChecks); its id must be the policy's.
   */
  private async checkedDraft(
    workspaceId: string,
    policyId: string,
    draft: PolicyCreate,
  ): Promise<EvaluablePolicy> {
    const policy = uncheckedDraft(draft)
    const errors = await this.deps.checks.check(workspaceId, policy.rules, policy.definition, '/draft')
    if (draft.id !== policyId)
      errors.unshift({
        pointer: '/draft/id',
        detail: `must be the id of the policy in the path ("${policyId}")`,
      })
    if (errors.length > 0) throw invalid(errors)
    return policy
  }

  async create(
    workspaceId: string,
    applicationId: string,
    policyId: string,
    input: PolicyTestCreate,
  ): Promise<Stored> {
    const expected = expectedInOrder(input.expected)
    checkExpected(expected, '/expected')
    const now = this.deps.clock.nowSeconds()
    const test: PolicyTest = {
      id: input.id ?? uuidv7(),
      application_id: applicationId,
      policy_id: policyId,
      name: input.name,
      messages: messagesInOrder(input.messages),
      context: input.context ?? null,
      expected,
      created: now,
      updated: now,
    }
    const key = { workspaceId, applicationId, policyId }
    const etag = newEtag()
    const write = async (tx: StoreTransaction) => {
      // The policy row stays locked (where the store needs it) while the count and the insert
      // run, so concurrent creates cannot pass the cap together.
      const policy = await findPolicyForUpdate(tx, workspaceId, applicationId, policyId)
      if (!policy) throw await this.missing(tx.statements, key)
      if ((await findPolicyTest(tx.db, key, test.id)) !== undefined) throw this.duplicate(key, test.id)
      if ((await countPolicyTests(tx.db, key)) >= MAX_TESTS_PER_POLICY) {
        throw conflict(
          `Policy "${policyId}" already has ${MAX_TESTS_PER_POLICY} test cases, the most it may hold`,
        )
      }
      await insertPolicyTest(tx.statements, {
        workspace_id: workspaceId,
        application_id: applicationId,
        policy_id: policyId,
        id: test.id,
        name: test.name,
        messages: toJson(test.messages),
        context: test.context === null ? null : toJson(test.context),
        expected: toJson(test.expected),
        etag,
        created: now,
        updated: now,
      })
    }
    try {
      await this.deps.store.write(write)
    } catch (error) {
      // The insert's own failure arrives with the commit (Statements.run): map it here.
      if (isUniqueViolation(error)) throw this.duplicate(key, test.id)
      throw error
    }
    return { id: test.id, etag, json: JSON.stringify(test) }
  }

  async get(workspaceId: string, applicationId: string, policyId: string, id: string): Promise<Stored> {
    const key = { workspaceId, applicationId, policyId }
    const row = await findPolicyTest(this.deps.store.db, key, id)
    if (!row) throw await this.missing(this.deps.store.statements, key, id)
    return { id, etag: row.etag, json: JSON.stringify(testFromRow(row)) }
  }

  /** One page in creation order, as the JSON text of the answer. */
  async list(
    workspaceId: string,
    applicationId: string,
    policyId: string,
    limit: number,
    cursor?: string,
  ): Promise<string> {
    const after = decodeCursor(cursor) ?? 0
    const key = { workspaceId, applicationId, policyId }
    const { db, statements } = this.deps.store
    if (!(await findPolicy(statements, workspaceId, applicationId, policyId)))
      throw await this.missing(statements, key)
    const rows = await listPolicyTests(db, key, after, limit + 1)
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    return pageJson(
      page.map((row) => JSON.stringify(testFromRow(row))),
      rows.length > limit && last ? encodeCursor(last.seq) : null,
    )
  }

  /** Applies a JSON merge patch; `expected` merges, `messages` and `expected.rules` are replaced whole. */
  async patch(
    workspaceId: string,
    applicationId: string,
    policyId: string,
    id: string,
    patch: PolicyTestPatch,
    ifMatch: string | undefined,
  ): Promise<Stored> {
    assertSameId(patch.id, id)
    const key = { workspaceId, applicationId, policyId }
    return this.deps.store.write(async (tx) => {
      const row = await findPolicyTest(tx.db, key, id)
      if (!row) throw await this.missing(tx.statements, key, id)
      assertIfMatch(ifMatch, row.etag)
      const current = testFromRow(row)
      const next: PolicyTest = {
        ...current,
        name: patch.name ?? current.name,
        messages: patch.messages ? messagesInOrder(patch.messages) : current.messages,
        context: patch.context === undefined ? current.context : patch.context,
        expected: patch.expected
          ? expectedInOrder({
              verdict: patch.expected.verdict ?? current.expected.verdict,
              rules: patch.expected.rules === undefined ? current.expected.rules : patch.expected.rules,
            })
          : current.expected,
      }
      checkExpected(next.expected, '/expected')
      if (JSON.stringify(next) === JSON.stringify(current)) {
        return { id, etag: row.etag, json: JSON.stringify(current) }
      }
      next.updated = Math.max(this.deps.clock.nowSeconds(), current.updated)
      const etag = newEtag()
      const changed = await updatePolicyTest(tx.db, row.seq, row.etag, {
        name: next.name,
        messages: toJson(next.messages),
        context: next.context === null ? null : toJson(next.context),
        expected: toJson(next.expected),
        etag,
        updated: next.updated,
      })
      if (!changed) throw preconditionFailed()
      return { id, etag, json: JSON.stringify(next) }
    })
  }

  async delete(
    workspaceId: string,
    applicationId: string,
    policyId: string,
    id: string,
    ifMatch: string | undefined,
  ): Promise<void> {
    const key = { workspaceId, applicationId, policyId }
    await this.deps.store.write(async (tx) => {
      const row = await findPolicyTest(tx.db, key, id)
      if (!row) throw await this.missing(tx.statements, key, id)
      assertIfMatch(ifMatch, row.etag)
      if (!(await deletePolicyTest(tx.db, row.seq, row.etag))) throw preconditionFailed()
    })
  }

  /** `POST …/test-runs`: every case against the current revision, or against a draft body. */
  async run(
    workspaceId: string,
    applicationId: string,
    policyId: string,
    request: PolicyTestRunRequest,
    signal?: AbortSignal,
  ): Promise<PolicyTestRun> {
    const key = { workspaceId, applicationId, policyId }
    const { db, statements } = this.deps.store
    const draft = request.draft ? await this.checkedDraft(workspaceId, policyId, request.draft) : null
    const row = await findPolicy(statements, workspaceId, applicationId, policyId)
    if (!row) throw await this.missing(statements, key)
    const policy = draft ?? evaluablePolicy(policyFromColumns(row))
    const cases = await listAllPolicyTests(db, key)
    const results = await this.runCases(
      key,
      policy,
      cases,
      signal,
      draft ? undefined : `${row.seq}:${row.revision}`,
    )
    const summary = { total: results.length, passed: 0, failed: 0, skipped: 0 }
    for (const result of results) summary[result.outcome]++
    return { policy_id: policyId, revision: policy.revision, summary, results }
  }

  /** The cases of a policy, stored in the order they were created: for a PATCH to check against. */
  listCases(key: PolicyKey): Promise<PolicyTestRow[]> {
    return listAllPolicyTests(this.deps.store.db, key)
  }

  /**
   * Evaluates each case against `policy` through the evaluator, as the evaluation API would (a
   * case as costly as an evaluation the pool takes goes there): a test run is not a production
   * evaluation, and is neither logged nor counted. Cases run concurrently (the judge bounds its
   * own calls in flight), and the event loop gets a turn every few milliseconds: up to 1,000
   * cases would otherwise hold it for their sum (docs/evaluation.md, "Large evaluations"). A
   * stored revision (`revisionKey`, row sequence and revision) is the evaluator's cached one, as
   * evaluations use it; a draft, or a policy as a PATCH would leave it, is compiled once for the run.
   */
  async runCases(
    { workspaceId, applicationId }: Pick<PolicyKey, 'workspaceId' | 'applicationId'>,
    policy: EvaluablePolicy,
    cases: readonly PolicyTestRow[],
    signal?: AbortSignal,
    revisionKey?: string,
  ): Promise<PolicyTestResult[]> {
    if (cases.length === 0) return []
    const { evaluator } = this.deps
    const budget = evaluator.budget()
    const stored =
      revisionKey === undefined
        ? evaluator.transient(workspaceId, policy)
        : (evaluator.cachedRevision(workspaceId, revisionKey, budget) ??
          evaluator.revision(workspaceId, revisionKey, policy, budget))
    const running: Promise<PolicyTestResult>[] = []
    let turn = performance.now()
    for (const row of cases) {
      if (performance.now() - turn >= TEST_RUN_SLICE_MS) {
        await yieldToLoop()
        turn = performance.now()
      }
      const test = testFromRow(row)
      const evaluated = evaluator.evaluate({
        workspace: workspaceId,
        applicationId,
        policies: [stored],
        conversation: { messages: test.messages, context: test.context },
        ...(signal ? { signal } : {}),
      })
      running.push(evaluated.then(({ answer }) => this.result(test, answer)))
    }
    return Promise.all(running)
  }

  private result(test: PolicyTest, evaluation: Evaluation): PolicyTestResult {
    const result = evaluation.policies[0] as PolicyResult
    return {
      test_id: test.id,
      outcome: judgeOutcome(test.expected, result),
      expected: test.expected,
      actual: {
        verdict: countedVerdict(result),
        rules: result.rules.map((r) => ({ index: r.index, status: r.status })),
      },
      evaluation,
    }
  }

  private duplicate(key: PolicyKey, id: string): AppError {
    return conflict(`A test case with id "${id}" already exists in policy "${key.policyId}"`)
  }

  /** Says which is missing: the application, the policy or the case. */
  private async missing(statements: Statements, key: PolicyKey, id?: string): Promise<AppError> {
    const { workspaceId, applicationId, policyId } = key
    if (!(await applicationExists(statements, workspaceId, applicationId)))
      return applicationNotFound(applicationId)
    if (!(await findPolicy(statements, workspaceId, applicationId, policyId)))
      return policyNotFound(applicationId, policyId)
    return notFound(`No test case "${id}" in policy "${policyId}"`)
  }
}

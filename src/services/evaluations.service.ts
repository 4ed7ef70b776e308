import { type FieldError, invalid } from '../errors.js'
import { textSize } from '../evaluation/cost.js'
import {
  type CompileBudget,
  guardedInPool as compiledOnlyInPool,
  type Evaluator,
  type StoredPolicy,
} from '../evaluation/evaluator.js'
import { evaluablePolicy } from '../evaluation/policy-for-evaluation.js'
import type { Metrics } from '../metrics.js'
import { failedRules } from '../rules/failed-rules.js'
import type { Evaluation, EvaluationRequest, EvaluationSource } from '../schemas/evaluations.js'
import type { ChatMessage } from '../schemas/messages.js'
import type { Store } from '../store/database.js'
import { policyFromColumns } from '../store/documents.js'
import { findApplicationSeq, findEvaluatedApplication } from '../store/evaluations.repository.js'
import { findPolicy, findPolicyBySeq, findPolicyRevision } from '../store/policies.repository.js'
import type { PolicyRow } from '../store/tables.js'
import { evaluationSpan, recordEvaluation } from '../telemetry/index.js'
import type { EvaluationCaller, EvaluationLogService, EvaluationRecord } from './evaluation-log.service.js'
import { applicationNotFound } from './support/records.js'

export type { StoredPolicy } from '../evaluation/evaluator.js'

/** The stored policies an evaluation evaluates, and the application's row they belong to. */
export interface StoredPolicies {
  appSeq: number
  policies: StoredPolicy[]
}

/**
 * Whether an enforced policy reading the reply is compiled only in the evaluation pool: nothing
 * on the event loop can hold back a stream's text for it, so a stream under it is buffered.
 */
export function guardedInPool(stored: StoredPolicies): boolean {
  return compiledOnlyInPool(stored.policies)
}

export type { EvaluationCaller } from './evaluation-log.service.js'

export interface EvaluationOptions {
  /** Abandons judge calls still under way (the client went away). */
  signal?: AbortSignal
  /**
   * What asked, kept in the evaluation log: a guarded chat completion's input or output check.
   * Without it, the request's own `source` (`api`, the default, or `playground`).
   */
  source?: EvaluationSource
  /**
   * The revisions to use, as an earlier evaluation of the same request used them (`decided.policies`),
   * instead of reading the current ones: a guarded completion's output is judged by the revisions
   * its input was, and reads none. Not with `policies` in the request.
   */
  policies?: StoredPolicies
  /**
   * The messages exactly as the client sent them (every part, every field), which `masked` gives
   * back masked; without them, the messages as read.
   */
  sent?: readonly ChatMessage[]
}

/**
 * Enforces an application's policies on one conversation (docs/evaluation.md): reads which
 * revisions apply, has the evaluator (src/evaluation/evaluator.ts) evaluate them, and logs it.
 */
export class EvaluationsService {
  constructor(
    private readonly deps: {
      store: Store
      evaluator: Evaluator
      log: EvaluationLogService
      metrics?: Metrics | null
      /** EVALUATION_MAX_WORK: characters × rules one evaluation may cost. */
      maxWork: number
    },
  ) {}

  async evaluate(
    caller: EvaluationCaller,
    applicationId: string,
    request: EvaluationRequest,
    options: EvaluationOptions = {},
  ): Promise<Evaluation> {
    const decided = await this.evaluateUnlogged(caller, applicationId, request, options)
    // Answered only once logged: an acknowledged evaluation is always in the log.
    await this.log([decided])
    return decided.answer
  }

  /**
   * Evaluates without writing the log entry: for a caller that answers after several evaluations
   * (a guarded chat completion's input and output) and logs them together, in one commit, with
   * `log`, before it answers.
   */
  evaluateUnlogged(
    caller: EvaluationCaller,
    applicationId: string,
    request: EvaluationRequest,
    options: EvaluationOptions = {},
  ): Promise<{ answer: Evaluation; record: EvaluationRecord; policies: StoredPolicies }> {
    // A span per evaluation when tracing is on (docs/tracing.md); off, the call as is.
    return evaluationSpan(applicationId, options.source ?? request.source ?? 'api', async (span) => {
      // Rules get spans of their own only under an evaluation span that records (sampled in).
      const decided = await this.decideUnlogged(
        caller,
        applicationId,
        request,
        options,
        span?.isRecording() === true,
      )
      if (span) {
        const { answer } = decided
        recordEvaluation(span, {
          id: answer.id,
          verdict: answer.verdict,
          action: answer.action,
          failedPolicies: [...new Set(failedRules(answer).map((r) => r.policy_id))],
        })
      }
      return decided
    })
  }

  private async decideUnlogged(
    caller: EvaluationCaller,
    applicationId: string,
    request: EvaluationRequest,
    options: EvaluationOptions,
    traced: boolean,
  ): Promise<{ answer: Evaluation; record: EvaluationRecord; policies: StoredPolicies }> {
    const { workspaceId } = caller
    const { evaluator } = this.deps
    const conversation = { messages: request.messages, context: request.context ?? null }
    // Drafts first: a draft the request cannot have is its problem, whatever else is.
    const drafts = await evaluator.drafts(workspaceId, request.draft_policies ?? [], conversation)
    const budget = evaluator.budget()
    const used =
      options.policies ??
      (request.policies === null || request.policies === undefined
        ? await this.currentPolicies(workspaceId, applicationId, budget)
        : await this.pinnedPolicies(workspaceId, applicationId, request.policies, budget))
    const draftRules = drafts.bodies.reduce((n, d) => n + d.rules.length, 0)
    this.checkWork(textSize(conversation).characters, used.policies, draftRules, drafts.bodies.length > 0)
    const { answer, outcome, redactedLog } = await evaluator.evaluate({
      workspace: workspaceId,
      applicationId,
      policies: used.policies,
      drafts,
      conversation,
      redact: request.redact === true,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.sent ? { sent: options.sent } : {}),
      traced,
      observed: true,
    })
    const record: EvaluationRecord = {
      caller,
      appSeq: used.appSeq,
      source: options.source ?? request.source ?? 'api',
      conversation,
      outcome,
      answer,
    }
    if (redactedLog) record.redactedLog = redactedLog
    return { answer, record, policies: used }
  }

  /**
   * Writes the log entries of evaluations made by `evaluateUnlogged`, all in one commit. The
   * evaluation metrics count what the applications asked: a playground run is in the log only.
   */
  async log(decided: readonly { answer: Evaluation; record: EvaluationRecord }[]): Promise<void> {
    await this.deps.log.recordAll(decided.map((d) => d.record))
    for (const { answer, record } of decided)
      if (record.source !== 'playground')
        this.deps.metrics?.evaluation(record.caller.workspaceId, answer.application_id, answer)
  }

  /**
   * Every policy of the application at its current revision, in creation order, and the
   * application's row (what the log files the entry under): one read of the store when every
   * revision is compiled already.
   */
  private async currentPolicies(
    workspaceId: string,
    applicationId: string,
    budget: CompileBudget,
  ): Promise<StoredPolicies> {
    const { db, statements } = this.deps.store
    const application = await findEvaluatedApplication(statements, workspaceId, applicationId)
    if (!application) throw applicationNotFound(applicationId)
    const policies: StoredPolicy[] = []
    for (const version of application.versions) {
      let policy = this.cached(workspaceId, `${version.seq}:${version.revision}`, budget)
      if (!policy) {
        const row = await findPolicyBySeq(db, version.seq)
        // Changed or deleted since the list was read: evaluate what the row holds now.
        if (!row) continue
        policy = this.storedRow(workspaceId, row, budget)
      }
      policies.push(policy)
    }
    return { appSeq: application.appSeq, policies }
  }

  /** The policies the request names, each at its current or pinned revision; 422 for any missing. */
  private async pinnedPolicies(
    workspaceId: string,
    applicationId: string,
    selectors: NonNullable<EvaluationRequest['policies']>,
    budget: CompileBudget,
  ): Promise<StoredPolicies> {
    const { db, statements } = this.deps.store
    const appSeq = await findApplicationSeq(statements, workspaceId, applicationId)
    if (appSeq === undefined) throw applicationNotFound(applicationId)
    const errors: FieldError[] = []
    const compiled: StoredPolicy[] = []
    for (const [i, selector] of selectors.entries()) {
      const id = typeof selector === 'string' ? selector : selector.id
      const revision = typeof selector === 'string' ? null : (selector.revision ?? null)
      const row = await findPolicy(statements, workspaceId, applicationId, id)
      if (!row) {
        errors.push({
          pointer: typeof selector === 'string' ? `/policies/${i}` : `/policies/${i}/id`,
          detail: `names no policy of application "${applicationId}"`,
        })
        continue
      }
      if (revision === null || revision === row.revision) {
        compiled.push(
          this.cached(workspaceId, `${row.seq}:${row.revision}`, budget) ??
            this.storedRow(workspaceId, row, budget),
        )
        continue
      }
      const key = `${row.seq}:${revision}`
      const cached = this.cached(workspaceId, key, budget)
      if (cached) {
        compiled.push(cached)
        continue
      }
      const past = await findPolicyRevision(db, { workspaceId, applicationId, policyId: id }, revision)
      if (!past) {
        errors.push({
          pointer: `/policies/${i}/revision`,
          detail: `policy "${id}" has no revision ${revision}; its latest is ${row.revision}`,
        })
        continue
      }
      const policy = evaluablePolicy(
        policyFromColumns({ ...past, id, created: row.created, updated: past.created }),
        false,
      )
      compiled.push(this.deps.evaluator.revision(workspaceId, key, policy, budget))
    }
    if (errors.length > 0) throw invalid(errors)
    return { appSeq, policies: compiled }
  }

  private storedRow(workspace: string, row: PolicyRow, budget: CompileBudget): StoredPolicy {
    const policy = evaluablePolicy(policyFromColumns(row), false)
    return this.deps.evaluator.revision(workspace, `${row.seq}:${row.revision}`, policy, budget)
  }

  private cached(workspace: string, key: string, budget: CompileBudget): StoredPolicy | undefined {
    return this.deps.evaluator.cachedRevision(workspace, key, budget)
  }

  /**
   * Refuses an evaluation whose work (the conversation's characters times the rules evaluated)
   * is over EVALUATION_MAX_WORK, before any of it is done: 20 drafts of 64 rules over 43 KB once
   * held the process for 14 s.
   */
  private checkWork(
    characters: number,
    stored: readonly StoredPolicy[],
    draftRules: number,
    drafted: boolean,
  ): void {
    const limit = this.deps.maxWork
    let rules = draftRules
    for (const p of stored) rules += p.policy.rules.length
    if (characters * rules <= limit) return
    const detail = `This evaluation would cost ${characters} characters × ${rules} rules = ${characters * rules}, over the limit of ${limit} (EVALUATION_MAX_WORK): evaluate fewer or shorter texts, or fewer policies at once`
    throw invalid([{ pointer: drafted ? '/draft_policies' : '/messages', detail }], detail)
  }
}

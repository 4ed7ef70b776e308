import { type Clock, systemClock } from '../clock.js'
import type { Config } from '../config.js'
import { Evaluator } from '../evaluation/evaluator.js'
import { createGuards, type Guards } from '../evaluation/guard-scorer.js'
import { EvaluationPool, workerEntry } from '../evaluation/pool.js'
import { RuleChecks } from '../evaluation/rule-checks.js'
import type { Judge } from '../judge/judge.js'
import { createOpenAiJudge } from '../judge/openai.js'
import { Metrics } from '../metrics.js'
import { shippedClassifiers } from '../models/shipped.js'
import type { Classifiers, SecondStage } from '../rules/evaluate.js'
import type { Store } from '../store/database.js'
import { ApiKeysService } from './api-keys.service.js'
import { ApplicationsService } from './applications.service.js'
import { AuthenticationService } from './authentication.service.js'
import { ChatCompletionsService } from './chat-completions.service.js'
import { DetectorsService } from './detectors.service.js'
import { EvaluationLogService } from './evaluation-log.service.js'
import { EvaluationsService } from './evaluations.service.js'
import { IdempotencyService } from './idempotency.service.js'
import { OperatorService } from './operator.service.js'
import { PoliciesService } from './policies.service.js'
import { PolicyTestsService } from './policy-tests.service.js'
import { ResponsesService } from './responses.service.js'
import { TransferService } from './transfer.service.js'
import { WorkspaceGrants } from './workspace-grants.js'

export interface Services {
  applications: ApplicationsService
  policies: PoliciesService
  policyTests: PolicyTestsService
  authentication: AuthenticationService
  apiKeys: ApiKeysService
  operator: OperatorService
  idempotency: IdempotencyService
  transfer: TransferService
  evaluations: EvaluationsService
  /** The one evaluation core (src/evaluation/evaluator.ts): its pool, its warm-up, its stop. */
  evaluator: Evaluator
  /** Prometheus metrics; null when METRICS_PORT is 0. */
  metrics: Metrics | null
  chatCompletions: ChatCompletionsService
  responses: ResponsesService
  evaluationLog: EvaluationLogService
  /** What rules may name in `detector`, per workspace. */
  detectors: DetectorsService
}

/** What the services are built from: nothing else reaches them, and no service reads globals. */
export interface ServiceDependencies {
  store: Store
  config: Config
  /** The time; the machine's clock unless a test sets another. */
  clock?: Clock
  /** The judge of scored rules; by default the one `config.judge` names, or none. */
  judge?: Judge | null
  /** The guard detectors; by default those `config.guards` names (none: null). */
  guards?: Guards | null
  /** Where metrics are recorded; by default a registry of their own, none when `config.metricsPort` is 0. */
  metrics?: Metrics | null
  /** The offline classifiers of toxicity and prompt_injection; by default the ones Warden ships. */
  classifiers?: Classifiers
  /**
   * The evaluation pool's worker entry; by default the one beside the running code, which only a
   * build has (from the TypeScript sources the pool is off). The workers evaluate with the
   * classifiers Warden ships.
   */
  evaluationWorker?: URL | null
  /**
   * The offline models' second stage (src/models/second-stage.ts) for evaluations on the event
   * loop; the pool's workers then load their own. Null (the default): none, the linear models decide.
   */
  second?: SecondStage | null
  /** How long one evaluation may compute in the pool, from when a worker starts it (default 30 s). */
  evaluationPoolTimeoutMs?: number
}

/**
 * How long an evaluation may compute in the pool, its waits for a worker and for the judge not
 * counted: far past any evaluation within EVALUATION_MAX_WORK.
 */
const POOL_TIMEOUT_MS = 30_000

/** The judge the configuration names: an OpenAI-compatible endpoint, or none. */
export function judgeFromConfig(config: Config, metrics: Metrics | null = null): Judge | null {
  if (config.judge === null) return null
  const { baseUrl, model, apiKey, timeoutMs, maxConcurrency } = config.judge
  return createOpenAiJudge({
    baseUrl,
    model,
    apiKey,
    timeoutMs,
    maxConcurrency,
    ...(metrics ? { onCall: metrics.judgeCall } : {}),
  })
}

/** The guard detectors the configuration names (GUARD_<NAME>_…; docs/guards.md), or null for none. */
export function guardsFromConfig(
  config: Config,
  store: Store,
  metrics: Metrics | null = null,
): Guards | null {
  const grants = new WorkspaceGrants({ store })
  return createGuards(config.guards, {
    allows: (grant, workspaceId) => grants.allows(grant, workspaceId),
    ...(metrics ? { onCall: metrics.guardCall, onEscalation: metrics.guardEscalation } : {}),
  })
}

export function createServices({
  store,
  config,
  clock = systemClock,
  metrics = config.metricsPort > 0 ? new Metrics() : null,
  judge = judgeFromConfig(config, metrics),
  guards = guardsFromConfig(config, store, metrics),
  classifiers = shippedClassifiers(),
  evaluationWorker = workerEntry(),
  evaluationPoolTimeoutMs = POOL_TIMEOUT_MS,
  second = null,
}: ServiceDependencies): Services {
  const authentication = new AuthenticationService({ store, clock })
  const evaluationLog = new EvaluationLogService({
    store,
    clock,
    content: config.evaluationLogContent,
    retentionDays: config.evaluationRetentionDays,
  })
  const applications = new ApplicationsService({ store, clock })
  // Workers start only when asked (`start`, after the server listens, or a first large evaluation).
  const pool =
    config.evaluationPoolSize > 0 && evaluationWorker
      ? new EvaluationPool({
          size: config.evaluationPoolSize,
          entry: evaluationWorker,
          timeoutMs: evaluationPoolTimeoutMs,
          judge,
          guards,
          second: second !== null,
        })
      : null
  const checks = new RuleChecks({ pool, guards })
  // The one evaluation core: every evaluation, of every service, goes through it.
  const evaluator = new Evaluator({
    clock,
    judge,
    guards,
    classifiers,
    second,
    metrics,
    pool,
    poolMinMs: config.evaluationPoolMinMs,
    logRedacted: config.evaluationLogContent === 'redacted',
  })
  const policyTests = new PolicyTestsService({ store, clock, evaluator, guards, checks })
  const evaluations = new EvaluationsService({
    store,
    evaluator,
    log: evaluationLog,
    metrics,
    maxWork: config.evaluationMaxWork,
  })
  const guarded = {
    applications,
    evaluations,
    evaluator,
    config,
    clock,
    grants: new WorkspaceGrants({ store }),
  }
  return {
    applications,
    policies: new PoliciesService({ store, clock, checks, tests: policyTests }),
    policyTests,
    authentication,
    apiKeys: new ApiKeysService({ store, clock, authentication }),
    operator: new OperatorService({ store, clock, authentication }),
    idempotency: new IdempotencyService({ store, clock }),
    transfer: new TransferService(store),
    evaluations,
    evaluator,
    chatCompletions: new ChatCompletionsService(guarded),
    responses: new ResponsesService(guarded),
    evaluationLog,
    metrics,
    detectors: new DetectorsService({ judge: judge !== null, guards }),
  }
}

/** Environment → validated, frozen configuration. Read once at start-up, then passed in. */

import {
  baseUrl,
  ConfigError,
  choice,
  flag,
  httpUrl,
  integer,
  type WorkspaceGrant,
  workspaceGrant,
} from './environment.js'
import { type GuardDirectory, loadGuards } from './guards/config.js'

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export type StoreConfig =
  | {
      kind: 'sqlite'
      path: string
      /** Past this size the write-ahead log is checkpointed with TRUNCATE (SQLITE_WAL_TRUNCATE_MB). */
      walTruncateBytes?: number
    }
  | {
      kind: 'postgres'
      url: string
      /** Connections per instance. */
      poolSize: number
      /** Per-statement limit in milliseconds; 0 disables it. */
      statementTimeoutMs: number
      /** PostgreSQL schema to use (default `public`). */
      schema?: string
    }

/** The judge of scored rules: any OpenAI-compatible Chat Completions endpoint (docs/evaluation.md). */
export interface JudgeConfig {
  /** e.g. http://127.0.0.1:11434/v1; requests go to `{baseUrl}/chat/completions`. */
  readonly baseUrl: string
  readonly model: string
  /** Sent as `Authorization: Bearer`; never logged. */
  readonly apiKey: string | null
  readonly timeoutMs: number
  readonly maxConcurrency: number
}

export interface Config {
  readonly port: number
  readonly host: string
  readonly databaseUrl: string
  readonly store: StoreConfig
  readonly logLevel: LogLevel
  readonly adminKey: string | null
  readonly rateLimitPerMinute: number
  /** Redis shared by all instances for rate-limit counters; null counts per instance. */
  readonly redisUrl: string | null
  /** Largest accepted request body in bytes, on every route without its own (BODY_LIMIT_BYTES). */
  readonly bodyLimit: number
  /**
   * The routes with their own body limit, higher for multimodal traffic (images, audio and
   * files are passed over, so only the text read counts towards EVALUATION_MAX_WORK):
   * EVALUATIONS_BODY_LIMIT_BYTES and CHAT_COMPLETIONS_BODY_LIMIT_BYTES.
   */
  readonly bodyLimits: { readonly evaluations: number; readonly chatCompletions: number }
  /**
   * The request body bytes that may be in flight at once (received or declared, held until the
   * request ends): per workspace (WORKSPACE_BODY_BUDGET_BYTES) and in all
   * (BODY_BUDGET_BYTES). A body that does not fit is answered 503 before it is read.
   */
  readonly bodyBudget: { readonly workspace: number; readonly total: number }
  /** Longest time a client may take to send a whole request (headers within min(10 s, this)). */
  readonly requestTimeoutMs: number
  /** Seconds a SIGTERM waits for in-flight requests before giving up. */
  readonly shutdownGraceSeconds: number
  /** The judge; null when JUDGE_BASE_URL is not set. */
  readonly judge: JudgeConfig | null
  /** What the evaluation log keeps of the evaluated texts (EVALUATION_LOG_CONTENT). */
  readonly evaluationLogContent: EvaluationLogContent
  /** Days an evaluation log entry is kept (EVALUATION_RETENTION_DAYS, default 30). */
  readonly evaluationRetentionDays: number
  /** The Prometheus listener: port (METRICS_PORT, default 9464; 0 turns it off) and host. */
  readonly metricsPort: number
  readonly metricsHost: string
  /** Model providers' upstreams, by provider name (PROVIDER_<NAME>_BASE_URL and _API_KEY). */
  readonly providers: ProviderDirectory
  /** How long an upstream model call may take (PROVIDER_TIMEOUT_MS, default 60000). */
  readonly providerTimeoutMs: number
  /**
   * The most work one evaluation may cost (EVALUATION_MAX_WORK): the conversation's characters
   * times the rules evaluated, summed over its policies. More is a 422 naming the limit.
   */
  readonly evaluationMaxWork: number
  /**
   * Evaluation worker threads (EVALUATION_POOL_SIZE, default 2, so that one workspace's large
   * evaluations always leave a worker to the others; 0 evaluates everything on the event loop), and the estimated worst-case milliseconds from which an evaluation runs in one
   * instead of on the event loop (EVALUATION_POOL_MIN_MS, default 40).
   */
  readonly evaluationPoolSize: number
  readonly evaluationPoolMinMs: number
  /**
   * The fewest code points of a window of a streamed reply that scored output rules read
   * (STREAM_WINDOW_CHARS, default 400); a window extends to the next sentence end.
   */
  readonly streamWindowChars: number
  /** The operator's guard detectors (GUARD_<NAME>_…; docs/guards.md), by their lower-cased NAME. */
  readonly guards: GuardDirectory
  /** Traces over OTLP/HTTP (OpenTelemetry's OTEL_* variables; docs/tracing.md); null: off. */
  readonly tracing: TracingConfig | null
  /**
   * Whether offline prompt_injection rules ask the neural second stage where the linear model is
   * unsure, and about documents (PROMPT_INJECTION_SECOND_STAGE, default false; docs/detectors.md).
   */
  readonly promptInjectionSecondStage: boolean
}

/** What OpenTelemetry's standard variables, and Warden's own, ask of tracing (docs/tracing.md). */
export interface TracingConfig {
  /** The OTLP/HTTP traces endpoint (…/v1/traces). */
  readonly url: string
  /** OTEL_SERVICE_NAME (default `warden`). */
  readonly serviceName: string
  /** TRACING_GUARDRAIL_ATTRIBUTES: also set the open proposal's `gen_ai.guardrail.*` attributes. */
  readonly guardrailAttributes: boolean
  /**
   * OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: model calls' spans also carry the
   * messages sent and answered (`gen_ai.input.messages`, `gen_ai.output.messages`), capped.
   */
  readonly captureMessageContent: boolean
}

export type EvaluationLogContent = 'redacted' | 'none' | 'full'

/** An OpenAI-compatible upstream of a model provider. */
export interface ProviderUpstream {
  /** e.g. https://api.openai.com/v1; requests go to `{baseUrl}/chat/completions`. */
  readonly baseUrl: string
  /** Sent as `Authorization: Bearer`; never logged, never sent to a client. */
  readonly apiKey: string | null
  /** The workspaces that may use it (PROVIDER_<NAME>_WORKSPACES); null: every workspace. */
  readonly workspaces: WorkspaceGrant
  /**
   * Top-level request fields outside OpenAI's APIs that this provider takes and the guarded routes
   * pass on as sent (PROVIDER_<NAME>_EXTRA_FIELDS, e.g. vLLM's `min_p`); empty: none.
   */
  readonly extraFields: ReadonlySet<string>
}

export interface ProviderDirectory {
  /**
   * The upstream of an application's `provider`: PROVIDER_<NAME>_BASE_URL and
   * PROVIDER_<NAME>_API_KEY, NAME being the provider upper-cased with every other character as
   * `_`. Undefined when none is configured.
   */
  find(provider: string): ProviderUpstream | undefined
  /** The configured provider NAMEs (upper-cased), for messages. */
  readonly names: readonly string[]
  /** Every provider's extra fields together: what a guarded route sets aside before its schema reads the body. */
  readonly extraFields: ReadonlySet<string>
}

/** The NAME of a provider in PROVIDER_<NAME>_…: upper-cased, every other character as `_`. */
export const providerEnvName = (provider: string): string => provider.toUpperCase().replace(/[^A-Z0-9]/g, '_')

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/** BODY_LIMIT_BYTES's default: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1_048_576
/** The default of the routes that take images, audio and files: 20 MiB. */
export const DEFAULT_MULTIMODAL_BODY_LIMIT = 20 * 1_048_576
/** The largest body limit that may be set: 256 MiB. */
const MAX_BODY_LIMIT = 256 * 1_048_576

/** WORKSPACE_BODY_BUDGET_BYTES's default (64 MiB), unless the largest body limit is larger. */
export const DEFAULT_WORKSPACE_BODY_BUDGET = 64 * 1_048_576
/** BODY_BUDGET_BYTES's default (256 MiB), unless the workspace budget is larger. */
export const DEFAULT_BODY_BUDGET = 256 * 1_048_576
/** The largest body budget that may be set: 64 GiB. */
const MAX_BODY_BUDGET = 64 * 1024 * 1_048_576

/** The write-ahead log's size past which the SQLite writer truncates it (SQLITE_WAL_TRUNCATE_MB). */
export const DEFAULT_WAL_TRUNCATE_BYTES = 64 * 1_048_576

/** Parses a `DATABASE_URL` into the store it names. */
export function parseDatabaseUrl(url: string, env: NodeJS.ProcessEnv = {}): StoreConfig {
  if (url.startsWith('sqlite:')) {
    let path = url.slice('sqlite:'.length)
    // Accept both sqlite:./file.db and sqlite:///abs/file.db.
    if (path.startsWith('//')) path = path.slice(2)
    if (path === '')
      throw new ConfigError('DATABASE_URL names no SQLite file (expected sqlite:./data/warden.db)')
    return {
      kind: 'sqlite',
      path,
      walTruncateBytes:
        integer(env, 'SQLITE_WAL_TRUNCATE_MB', DEFAULT_WAL_TRUNCATE_BYTES / 1_048_576, 1, 1_000_000) *
        1_048_576,
    }
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    try {
      new URL(url)
    } catch {
      throw new ConfigError('DATABASE_URL is not a valid postgres:// URL')
    }
    return {
      kind: 'postgres',
      url,
      poolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
      statementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 5000, 0, 3_600_000),
    }
  }
  throw new ConfigError('DATABASE_URL must start with sqlite: or postgres://')
}

function redisUrl(raw: string | undefined): string | null {
  const url = raw?.trim()
  if (!url) return null
  if (!/^rediss?:\/\//.test(url)) throw new ConfigError('REDIS_URL must start with redis:// or rediss://')
  return url
}

function judgeConfig(env: NodeJS.ProcessEnv): JudgeConfig | null {
  const url = baseUrl(env, 'JUDGE_BASE_URL', 'JUDGE_API_KEY')
  if (url === null) return null
  const model = env.JUDGE_MODEL?.trim()
  if (!model) throw new ConfigError('JUDGE_MODEL is required when JUDGE_BASE_URL is set')
  const apiKey = env.JUDGE_API_KEY?.trim()
  return Object.freeze({
    baseUrl: url,
    model,
    apiKey: apiKey ? apiKey : null,
    timeoutMs: integer(env, 'JUDGE_TIMEOUT_MS', 10_000, 1, 600_000),
    maxConcurrency: integer(env, 'JUDGE_MAX_CONCURRENCY', 16, 1, 10_000),
  })
}

/** A top-level field name a provider may take beyond OpenAI's APIs (`min_p`, `chat_template_kwargs`). */
const EXTRA_FIELD = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

/**
 * PROVIDER_<NAME>_EXTRA_FIELDS: comma-separated top-level field names (spaces around a name
 * allowed), each 1 to 64 of A-Z, a-z, 0-9 and `_`, not starting with a digit. Unset or empty:
 * none. Anything else stops the start-up, naming the variable.
 */
export function extraFields(env: NodeJS.ProcessEnv, variable: string): ReadonlySet<string> {
  const raw = env[variable]
  if (raw === undefined || raw.trim() === '') return Object.freeze(new Set<string>())
  const names = raw.split(',').map((n) => n.trim())
  for (const name of names)
    if (!EXTRA_FIELD.test(name))
      throw new ConfigError(
        `${variable} must be top-level field names separated by commas (each 1 to 64 of A-Z, a-z, 0-9, "_", not starting with a digit), got "${raw}"`,
      )
  return Object.freeze(new Set(names))
}

function providers(env: NodeJS.ProcessEnv): ProviderDirectory {
  const upstreams = new Map<string, ProviderUpstream>()
  for (const name of Object.keys(env)) {
    const granted = /^PROVIDER_([A-Z0-9_]+)_(WORKSPACES|EXTRA_FIELDS)$/.exec(name)
    if (granted?.[1] && !env[`PROVIDER_${granted[1]}_BASE_URL`]?.trim())
      throw new ConfigError(
        `${name} is set but PROVIDER_${granted[1]}_BASE_URL is not: there is no upstream to ${granted[2] === 'WORKSPACES' ? 'grant' : 'pass fields to'}`,
      )
    const match = /^PROVIDER_([A-Z0-9_]+)_BASE_URL$/.exec(name)
    if (!match?.[1]) continue
    const url = baseUrl(env, name, `PROVIDER_${match[1]}_API_KEY`)
    if (url === null) continue
    const apiKey = env[`PROVIDER_${match[1]}_API_KEY`]?.trim()
    upstreams.set(
      match[1],
      Object.freeze({
        baseUrl: url,
        apiKey: apiKey ? apiKey : null,
        workspaces: workspaceGrant(env, `PROVIDER_${match[1]}_WORKSPACES`),
        extraFields: extraFields(env, `PROVIDER_${match[1]}_EXTRA_FIELDS`),
      }),
    )
  }
  return Object.freeze({
    find: (provider: string) => upstreams.get(providerEnvName(provider)),
    names: Object.freeze([...upstreams.keys()].sort()),
    extraFields: Object.freeze(new Set([...upstreams.values()].flatMap((u) => [...u.extraFields]))),
  })
}

/**
 * OpenTelemetry's variables that Warden reads itself: OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER
 * (`otlp`, the default, or `none`), OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is) or
 * OTEL_EXPORTER_OTLP_ENDPOINT (`/v1/traces` appended), OTEL_SERVICE_NAME (default `warden`) and
 * OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT (off by default); TRACING_GUARDRAIL_ATTRIBUTES
 * is Warden's. Every switch is checked even when tracing is off. OTEL_EXPORTER_OTLP_HEADERS, the
 * sampler's and the exporter's other variables are read by OpenTelemetry's SDK when tracing
 * starts. Tracing is on only when an endpoint is set.
 */
function tracing(env: NodeJS.ProcessEnv): TracingConfig | null {
  const disabled = flag(env, 'OTEL_SDK_DISABLED')
  const guardrailAttributes = flag(env, 'TRACING_GUARDRAIL_ATTRIBUTES')
  const captureMessageContent = flag(env, 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT')
  const tracesEndpoint = httpUrl(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')
  const endpoint = httpUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT')
  if (disabled) return null
  const exporters = (env.OTEL_TRACES_EXPORTER ?? 'otlp').split(',').map((e) => e.trim())
  if (!exporters.includes('otlp')) return null
  const url = tracesEndpoint || (endpoint ? `${endpoint.replace(/\/+$/, '')}/v1/traces` : '')
  if (!url) return null
  return Object.freeze({
    url,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || 'warden',
    guardrailAttributes,
    captureMessageContent,
  })
}

const LOG_CONTENTS: readonly [EvaluationLogContent, ...EvaluationLogContent[]] = ['redacted', 'none', 'full']

/** Reads and validates the environment; throws ConfigError with one clear line on bad input. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL?.trim() || 'sqlite:./data/warden.db'
  const logLevel = (env.LOG_LEVEL?.trim() || 'info') as LogLevel
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`)
  }
  const adminKey =
    env.WARDEN_ADMIN_KEY === undefined || env.WARDEN_ADMIN_KEY === '' ? null : env.WARDEN_ADMIN_KEY
  if (adminKey !== null && !/^[\x21-\x7e]{24,256}$/.test(adminKey)) {
    throw new ConfigError('WARDEN_ADMIN_KEY must be 24 to 256 printable ASCII characters without spaces')
  }
  const host = env.HOST?.trim() || '127.0.0.1'
  const bodyLimit = integer(env, 'BODY_LIMIT_BYTES', DEFAULT_BODY_LIMIT, 1024, MAX_BODY_LIMIT)
  const bodyLimits = Object.freeze({
    evaluations: integer(
      env,
      'EVALUATIONS_BODY_LIMIT_BYTES',
      DEFAULT_MULTIMODAL_BODY_LIMIT,
      1024,
      MAX_BODY_LIMIT,
    ),
    chatCompletions: integer(
      env,
      'CHAT_COMPLETIONS_BODY_LIMIT_BYTES',
      DEFAULT_MULTIMODAL_BODY_LIMIT,
      1024,
      MAX_BODY_LIMIT,
    ),
  })
  return Object.freeze({
    port: integer(env, 'PORT', 8080, 0, 65535),
    host,
    databaseUrl,
    store: Object.freeze(parseDatabaseUrl(databaseUrl, env)),
    logLevel,
    adminKey,
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 6000, 0, 100_000_000),
    redisUrl: redisUrl(env.REDIS_URL),
    bodyLimit,
    bodyLimits,
    bodyBudget: bodyBudget(env, Math.max(bodyLimit, bodyLimits.evaluations, bodyLimits.chatCompletions)),
    shutdownGraceSeconds: integer(env, 'SHUTDOWN_GRACE_SECONDS', 10, 1, 3600),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_SECONDS', 30, 1, 3600) * 1000,
    judge: judgeConfig(env),
    evaluationLogContent: choice(env, 'EVALUATION_LOG_CONTENT', LOG_CONTENTS),
    evaluationRetentionDays: integer(env, 'EVALUATION_RETENTION_DAYS', 30, 1, 36_500),
    metricsPort: integer(env, 'METRICS_PORT', 9464, 0, 65535),
    metricsHost: env.METRICS_HOST?.trim() || '127.0.0.1',
    providers: providers(env),
    providerTimeoutMs: integer(env, 'PROVIDER_TIMEOUT_MS', 60_000, 1, 3_600_000),
    evaluationMaxWork: integer(env, 'EVALUATION_MAX_WORK', 32_000_000, 1_000_000, 1_000_000_000),
    evaluationPoolSize: integer(env, 'EVALUATION_POOL_SIZE', 2, 0, 64),
    evaluationPoolMinMs: integer(env, 'EVALUATION_POOL_MIN_MS', 40, 0, 60_000),
    streamWindowChars: integer(env, 'STREAM_WINDOW_CHARS', 400, 1, 100_000),
    guards: loadGuards(env),
    tracing: tracing(env),
    promptInjectionSecondStage: flag(env, 'PROMPT_INJECTION_SECOND_STAGE'),
  })
}

/**
 * The body budgets (WORKSPACE_BODY_BUDGET_BYTES, BODY_BUDGET_BYTES). Each must hold the largest
 * body a route accepts, or that body could never be admitted; unset, each defaults to its
 * documented value or to what it must hold, whichever is larger.
 */
function bodyBudget(env: NodeJS.ProcessEnv, largestBody: number): Config['bodyBudget'] {
  const budget = (name: string, fallback: number, least: number, leastIs: string) => {
    const value = integer(env, name, Math.max(fallback, least), 1024, MAX_BODY_BUDGET)
    if (value < least)
      throw new ConfigError(`${name} must be at least ${leastIs} (${least} bytes), got ${value}`)
    return value
  }
  const workspace = budget(
    'WORKSPACE_BODY_BUDGET_BYTES',
    DEFAULT_WORKSPACE_BODY_BUDGET,
    largestBody,
    'the largest body limit',
  )
  const total = budget('BODY_BUDGET_BYTES', DEFAULT_BODY_BUDGET, workspace, 'WORKSPACE_BODY_BUDGET_BYTES')
  return Object.freeze({ workspace, total })
}

/** Environment → validated, frozen configuration. Read once at start-up, then passed in. */

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export type StoreConfig =
  | { kind: 'sqlite'; path: string }
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
  /** Largest accepted request body in bytes. */
  readonly bodyLimit: number
  /** Longest time a client may take to send a whole request (headers within min(10 s, this)). */
  readonly requestTimeoutMs: number
  /** Seconds a SIGTERM waits for in-flight requests before giving up. */
  readonly shutdownGraceSeconds: number
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`)
  const value = Number(raw.trim())
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`)
  return value
}

/** Parses a `DATABASE_URL` into the store it names. */
export function parseDatabaseUrl(url: string, env: NodeJS.ProcessEnv = {}): StoreConfig {
  if (url.startsWith('sqlite:')) {
    let path = url.slice('sqlite:'.length)
    // Accept both sqlite:./file.db and sqlite:///abs/file.db.
    if (path.startsWith('//')) path = path.slice(2)
    if (path === '')
      throw new ConfigError('DATABASE_URL names no SQLite file (expected sqlite:./data/warden.db)')
    return { kind: 'sqlite', path }
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
  return Object.freeze({
    port: integer(env, 'PORT', 8080, 0, 65535),
    host,
    databaseUrl,
    store: Object.freeze(parseDatabaseUrl(databaseUrl, env)),
    logLevel,
    adminKey,
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 6000, 0, 100_000_000),
    redisUrl: redisUrl(env.REDIS_URL),
    bodyLimit: 1_048_576,
    shutdownGraceSeconds: integer(env, 'SHUTDOWN_GRACE_SECONDS', 10, 1, 3600),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_SECONDS', 30, 1, 3600) * 1000,
  })
}

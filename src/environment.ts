/**
 * Reading one environment variable: the parsers every setting goes through (config.ts and
 * guards/config.ts), each refusing a bad value with a ConfigError that names the variable, never
 * reading it as a default. Imports nothing of Warden, so that every configuration module can.
 */

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** A whole number between `min` and `max`; `fallback` when unset or blank. */
export function integer(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`)
  const value = Number(raw.trim())
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`)
  return value
}

/** The words a boolean variable takes for true and for false; the first of each is named in messages. */
export interface BooleanWords {
  readonly on: readonly [string, ...string[]]
  readonly off: readonly [string, ...string[]]
}

/** `true` or `false`: OpenTelemetry's spelling, and Warden's for its own switches. */
export const TRUE_FALSE: BooleanWords = { on: ['true'], off: ['false'] }

/**
 * A boolean variable: one of `words` (any case, blanks around ignored), `fallback` when unset or
 * blank; anything else is refused, never read as false.
 */
export function flag(env: NodeJS.ProcessEnv, name: string, fallback = false, words = TRUE_FALSE): boolean {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const value = raw.trim().toLowerCase()
  if (words.on.includes(value)) return true
  if (words.off.includes(value)) return false
  throw new ConfigError(`${name} must be ${words.on[0]} or ${words.off[0]}, got "${raw}"`)
}

/**
 * An http:// or https:// URL, trimmed; null when unset or blank. With `keyVariable`, a URL that
 * carries credentials is refused, since fetch refuses such a URL and every call would fail: the
 * message points to `keyVariable`, where the key goes.
 */
export function httpUrl(env: NodeJS.ProcessEnv, name: string, keyVariable?: string): string | null {
  const raw = env[name]?.trim()
  if (!raw) return null
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(`${name} is not a valid URL: "${raw}"`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(`${name} must start with http:// or https://`)
  if (keyVariable !== undefined && (url.username || url.password))
    throw new ConfigError(`${name} must not carry credentials; set ${keyVariable} instead`)
  return raw
}

/** An upstream's root (httpUrl, credentials refused) without a trailing `/`; null when unset. */
export function baseUrl(env: NodeJS.ProcessEnv, name: string, keyVariable: string): string | null {
  return httpUrl(env, name, keyVariable)?.replace(/\/+$/, '') ?? null
}

/** One of `values`; the first when unset or blank. */
export function choice<T extends string>(
  env: NodeJS.ProcessEnv,
  name: string,
  values: readonly [T, ...T[]],
): T {
  const raw = env[name]
  const value = raw?.trim()
  if (!value) return values[0]
  if (!(values as readonly string[]).includes(value))
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`)
  return value as T
}

/**
 * The workspaces an operator grants something it configures (PROVIDER_<NAME>_WORKSPACES, and
 * GUARD_<NAME>_WORKSPACES alike): their names, or null for every workspace (the variable unset).
 */
export type WorkspaceGrant = ReadonlySet<string> | null

/** A workspace's name, as `warden workspaces create` takes it. */
export const WORKSPACE_NAME = /^[A-Za-z0-9._-]{1,64}$/

/**
 * The workspaces `variable` (a comma-separated list of workspace names) grants; null when it is
 * unset. Throws a ConfigError naming the variable for a list that names no workspace or holds
 * something that is no workspace's name.
 */
export function workspaceGrant(env: NodeJS.ProcessEnv, variable: string): WorkspaceGrant {
  const raw = env[variable]
  if (raw === undefined) return null
  const names = raw.split(',').map((name) => name.trim())
  if (names.every((name) => name === ''))
    throw new ConfigError(`${variable} names no workspace; unset it to grant every workspace`)
  for (const name of names)
    if (!WORKSPACE_NAME.test(name))
      throw new ConfigError(
        `${variable} must be workspace names separated by commas (each 1 to 64 of A-Z, a-z, 0-9, ".", "_", "-"), got "${name}"`,
      )
  return Object.freeze(new Set(names))
}

/**
 * The operator's guard detectors, read from the environment (contract section 9; docs/guards.md):
 * GUARD_<NAME>_FORMAT, _BASE_URL, _MODEL, _API_KEY, _TIMEOUT_MS, _WORKSPACES, and the options
 * of some formats. NAME lower-cased is the detector's name a rule names in `detector`.
 */
import { ConfigError, type WorkspaceGrant, workspaceGrant } from '../config.js'
import { GUARD_FORMATS, type GuardFormatName, type GuardFormatOptions } from './formats/format.js'
import { DEFAULT_POSITIVE_LABELS } from './formats/text-classification.js'

/** Scores at or between `low` and `high`: where the offline model is unsure and the guard is asked. */
export interface Band {
  readonly low: number
  readonly high: number
}

export interface GuardConfig {
  /** The detector's name: NAME lower-cased (`GUARD_LLAMAGUARD_…` → `llamaguard`). */
  readonly name: string
  /** NAME as in the variables, for messages. */
  readonly envName: string
  readonly format: GuardFormatName
  /** The server's root as its own clients take it (`…/v1`, or TEI's root), without a trailing `/`. */
  readonly baseUrl: string
  /** The model name sent; null where none is sent (text-classification: TEI serves one model). */
  readonly model: string | null
  /** Sent as `Authorization: Bearer`; never logged, never answered. */
  readonly apiKey: string | null
  /** Per question, from the moment it is asked (waiting for a slot counts); default 10000. */
  readonly timeoutMs: number
  /** Calls in flight at once (GUARD_<NAME>_MAX_CONCURRENCY, default 16); one workspace holds at most half. */
  readonly maxConcurrency: number
  /** The workspaces that may use it; null: every workspace. */
  readonly workspaces: WorkspaceGrant
  /** Ask chat servers for log-probabilities (GUARD_<NAME>_LOGPROBS, default on). */
  readonly logprobs: boolean
  /** text-classification: the positive labels (GUARD_<NAME>_POSITIVE_LABELS). */
  readonly positiveLabels: readonly string[]
  /** text-classification: window size in characters (GUARD_<NAME>_WINDOW_CHARS, default 1500). */
  readonly windowChars: number
  /** granite-guardian: where the risk goes (GUARD_<NAME>_GUARDIAN_CONFIG: `template`, default, or `system`). */
  readonly guardianConfig: 'template' | 'system'
  /** The cascade band of the offline model's score inside which this guard is asked (GUARD_<NAME>_CASCADE=low,high); null: always asked. */
  readonly cascade: Band | null
}

/** The configured guards. */
export interface GuardDirectory {
  /** The guard a rule's `detector` names, or undefined. */
  find(name: string): GuardConfig | undefined
  /** Their names, sorted. */
  readonly names: readonly string[]
  readonly all: readonly GuardConfig[]
}

/** Detector names a guard cannot take: a rule's `detector` means the built-in ones by them. */
export const RESERVED_DETECTOR_NAMES = ['model', 'judge'] as const

const SETTINGS = [
  'FORMAT',
  'BASE_URL',
  'MODEL',
  'API_KEY',
  'TIMEOUT_MS',
  'WORKSPACES',
  'MAX_CONCURRENCY',
  'LOGPROBS',
  'POSITIVE_LABELS',
  'WINDOW_CHARS',
  'GUARDIAN_CONFIG',
  'CASCADE',
] as const
type Setting = (typeof SETTINGS)[number]

/** Settings that only some formats read: set for another format, they are a mistake. */
const FORMAT_SETTINGS: Partial<Record<Setting, readonly GuardFormatName[]>> = {
  LOGPROBS: ['llama-guard', 'granite-guardian', 'shieldgemma', 'qwen3guard'],
  POSITIVE_LABELS: ['text-classification'],
  WINDOW_CHARS: ['text-classification'],
  GUARDIAN_CONFIG: ['granite-guardian'],
}

/** Formats that must be told the model's name (their servers serve several). */
const NEEDS_MODEL: readonly GuardFormatName[] = [
  'llama-guard',
  'granite-guardian',
  'shieldgemma',
  'qwen3guard',
]

const VARIABLE = new RegExp(`^GUARD_([A-Z0-9_]+?)_(${SETTINGS.join('|')})$`)

/** Reads every GUARD_<NAME>_… variable; throws a ConfigError naming the variable at fault. */
export function loadGuards(env: NodeJS.ProcessEnv): GuardDirectory {
  const byName = new Map<string, Partial<Record<Setting, string>>>()
  for (const [variable, value] of Object.entries(env)) {
    if (!variable.startsWith('GUARD_') || value === undefined) continue
    const match = VARIABLE.exec(variable)
    if (!match?.[1] || !match[2])
      throw new ConfigError(
        `${variable} is not a guard setting: expected GUARD_<NAME>_ followed by one of ${SETTINGS.join(', ')}`,
      )
    const settings = byName.get(match[1]) ?? {}
    settings[match[2] as Setting] = value
    byName.set(match[1], settings)
  }
  const guards = [...byName].map(([envName, settings]) => guard(env, envName, settings))
  guards.sort((a, b) => (a.name < b.name ? -1 : 1))
  const found = new Map(guards.map((g) => [g.name, g]))
  return Object.freeze({
    find: (name: string) => found.get(name),
    names: Object.freeze(guards.map((g) => g.name)),
    all: Object.freeze(guards),
  })
}

function guard(
  env: NodeJS.ProcessEnv,
  envName: string,
  settings: Partial<Record<Setting, string>>,
): GuardConfig {
  const v = (setting: Setting) => `GUARD_${envName}_${setting}`
  const name = envName.toLowerCase()
  if ((RESERVED_DETECTOR_NAMES as readonly string[]).includes(name))
    throw new ConfigError(
      `${v('FORMAT')}: "${name}" is reserved for the built-in detector; choose another NAME`,
    )
  const rawFormat = settings.FORMAT?.trim()
  if (!rawFormat)
    throw new ConfigError(
      `${v('FORMAT')} is required when other GUARD_${envName}_ settings are set (one of ${GUARD_FORMATS.join(', ')})`,
    )
  if (!(GUARD_FORMATS as readonly string[]).includes(rawFormat))
    throw new ConfigError(`${v('FORMAT')} must be one of ${GUARD_FORMATS.join(', ')}, got "${rawFormat}"`)
  const format = rawFormat as GuardFormatName
  for (const [setting, formats] of Object.entries(FORMAT_SETTINGS))
    if (settings[setting as Setting] !== undefined && !formats.includes(format))
      throw new ConfigError(
        `${v(setting as Setting)} applies to ${formats.join(', ')} only, not to ${format}`,
      )

  const rawUrl = settings.BASE_URL?.trim()
  if (!rawUrl) throw new ConfigError(`${v('BASE_URL')} is required with ${v('FORMAT')}`)
  let url: URL
  try {
    url = new URL(rawUrl)
  } catch {
    throw new ConfigError(`${v('BASE_URL')} is not a valid URL: "${rawUrl}"`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(`${v('BASE_URL')} must start with http:// or https://`)
  if (url.username || url.password)
    throw new ConfigError(`${v('BASE_URL')} must not carry credentials; set ${v('API_KEY')} instead`)

  const model = settings.MODEL?.trim() || null
  if (!model && NEEDS_MODEL.includes(format))
    throw new ConfigError(
      `${v('MODEL')} is required for the ${format} format (the model name the server serves)`,
    )
  const apiKey = settings.API_KEY?.trim() || null

  return Object.freeze({
    name,
    envName,
    format,
    baseUrl: rawUrl.replace(/\/+$/, ''),
    model: format === 'text-classification' ? null : model,
    apiKey,
    timeoutMs: whole(settings.TIMEOUT_MS, v('TIMEOUT_MS'), 10_000, 1, 600_000),
    maxConcurrency: whole(settings.MAX_CONCURRENCY, v('MAX_CONCURRENCY'), 16, 1, 10_000),
    workspaces: workspaceGrant(env, v('WORKSPACES')),
    logprobs: onOff(settings.LOGPROBS, v('LOGPROBS'), true),
    positiveLabels: labels(settings.POSITIVE_LABELS, v('POSITIVE_LABELS')),
    windowChars: whole(settings.WINDOW_CHARS, v('WINDOW_CHARS'), 1500, 100, 100_000),
    guardianConfig: choice(settings.GUARDIAN_CONFIG, v('GUARDIAN_CONFIG'), ['template', 'system'] as const),
    cascade: band(settings.CASCADE, v('CASCADE')),
  })
}

function whole(
  raw: string | undefined,
  variable: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (raw === undefined || raw.trim() === '') return fallback
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${variable} must be a whole number, got "${raw}"`)
  const value = Number(raw.trim())
  if (value < min || value > max)
    throw new ConfigError(`${variable} must be between ${min} and ${max}, got ${value}`)
  return value
}

function onOff(raw: string | undefined, variable: string, fallback: boolean): boolean {
  const value = raw?.trim().toLowerCase()
  if (!value) return fallback
  if (value === 'on' || value === 'true' || value === '1') return true
  if (value === 'off' || value === 'false' || value === '0') return false
  throw new ConfigError(`${variable} must be on or off, got "${raw}"`)
}

function choice<T extends string>(raw: string | undefined, variable: string, values: readonly T[]): T {
  const value = raw?.trim()
  if (!value) return values[0] as T
  if (!(values as readonly string[]).includes(value))
    throw new ConfigError(`${variable} must be one of ${values.join(', ')}, got "${raw}"`)
  return value as T
}

function labels(raw: string | undefined, variable: string): readonly string[] {
  if (raw === undefined) return DEFAULT_POSITIVE_LABELS
  const list = raw
    .split(',')
    .map((label) => label.trim())
    .filter((label) => label !== '')
  if (list.length === 0) throw new ConfigError(`${variable} names no label; unset it for the defaults`)
  return Object.freeze(list)
}

function band(raw: string | undefined, variable: string): Band | null {
  if (raw === undefined || raw.trim() === '') return null
  const parts = raw.split(',').map((part) => part.trim())
  const numbers = parts.map(Number)
  const [low, high] = numbers
  if (
    parts.length !== 2 ||
    parts.some((part) => !/^\d*\.?\d+$/.test(part)) ||
    low === undefined ||
    high === undefined ||
    !(low >= 0 && high <= 1 && low < high)
  )
    throw new ConfigError(
      `${variable} must be two scores low,high with 0 <= low < high <= 1 (e.g. 0.2,0.8), got "${raw}"`,
    )
  return Object.freeze({ low, high })
}

/** Whether `workspace` may use the guard (GUARD_<NAME>_WORKSPACES; unset: every workspace). */
export function isGranted(guard: Pick<GuardConfig, 'workspaces'>, workspace: string): boolean {
  return guard.workspaces === null || guard.workspaces.has(workspace)
}

/** Whether the offline model's `score` is inside the band, bounds included: the guard is asked. No band: always. */
export function insideBand(score: number, band: Band | null): boolean {
  return band === null || (score >= band.low && score <= band.high)
}

/** What the guard's format reads of its configuration. */
export function formatOptions(guard: GuardConfig): GuardFormatOptions {
  return {
    model: guard.model,
    logprobs: guard.logprobs,
    positiveLabels: guard.positiveLabels,
    windowChars: guard.windowChars,
    guardianConfig: guard.guardianConfig,
  }
}

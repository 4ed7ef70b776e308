/**
 * The operator's guard detectors, read from the environment (contract section 9; docs/guards.md):
 * GUARD_<NAME>_FORMAT, _BASE_URL, _MODEL, _API_KEY, _TIMEOUT_MS, _WORKSPACES, and the options
 * of some formats. NAME lower-cased is the detector's name a rule names in `detector`.
 */
import {
  type BooleanWords,
  baseUrl,
  ConfigError,
  choice,
  flag,
  integer,
  type WorkspaceGrant,
  workspaceGrant,
} from '../environment.js'
import type { Band } from '../rules/band.js'
import { GUARD_FORMATS, type GuardFormatName, type GuardFormatOptions } from './formats/format.js'
import { DEFAULT_POSITIVE_LABELS } from './formats/text-classification.js'

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

/** GUARD_<NAME>_LOGPROBS's words (docs/guards.md): `on` or `off`, and `true` or `false`, `1` or `0`. */
const ON_OFF: BooleanWords = { on: ['on', 'true', '1'], off: ['off', 'false', '0'] }

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

  const url = baseUrl(env, v('BASE_URL'), v('API_KEY'))
  if (url === null) throw new ConfigError(`${v('BASE_URL')} is required with ${v('FORMAT')}`)

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
    baseUrl: url,
    model: format === 'text-classification' ? null : model,
    apiKey,
    timeoutMs: integer(env, v('TIMEOUT_MS'), 10_000, 1, 600_000),
    maxConcurrency: integer(env, v('MAX_CONCURRENCY'), 16, 1, 10_000),
    workspaces: workspaceGrant(env, v('WORKSPACES')),
    logprobs: flag(env, v('LOGPROBS'), true, ON_OFF),
    positiveLabels: labels(settings.POSITIVE_LABELS, v('POSITIVE_LABELS')),
    windowChars: integer(env, v('WINDOW_CHARS'), 1500, 100, 100_000),
    guardianConfig: choice(env, v('GUARDIAN_CONFIG'), ['template', 'system']),
    cascade: band(settings.CASCADE, v('CASCADE')),
  })
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

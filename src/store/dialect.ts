/** Everything that differs between SQLite and PostgreSQL, in one place. */

export type DialectName = 'sqlite' | 'postgres'

// What a driver's error means, by its code: better-sqlite3's `SQLITE_…` codes, PostgreSQL's
// five-character SQLSTATEs, and Node's socket errors (pg). Nothing else reads these codes.

const codeOf = (error: unknown): unknown => (error as { code?: unknown } | null)?.code

/** A unique or primary-key constraint failed. */
export function isUniqueViolation(error: unknown): boolean {
  const code = codeOf(error)
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE'
}

/** A foreign key constraint failed (the parent row is gone). */
export function isForeignKeyViolation(error: unknown): boolean {
  const code = codeOf(error)
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY'
}

/** Codes that mean the store is out of reach or overloaded, rather than a bad statement. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '08000',
  '08003',
  '08006',
  '57014', // statement timeout
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_FULL',
  'SQLITE_CANTOPEN',
])

/** Whether a driver's error means the store is out of reach (rather than a bad statement). */
export function isOutage(error: unknown): boolean {
  const code = codeOf(error)
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('SQLITE_IOERR')))
    return true
  // pg names a lost connection in the message only.
  const message = error instanceof Error ? error.message : ''
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
    message,
  )
}

/** A driver's own error (not one of Warden's): a SQLite code or a PostgreSQL SQLSTATE. */
export function isDriverError(error: unknown): boolean {
  const code = codeOf(error)
  return typeof code === 'string' && /^(SQLITE_[A-Z_]+|[0-9A-Z]{5})$/.test(code)
}

/**
 * PostgreSQL refused to run a prepared statement whose result type changed under it ("cached
 * plan must not change result type", SQLSTATE 0A000).
 */
export const isStalePlan = (error: unknown): boolean => codeOf(error) === '0A000'

/**
 * Whether reads for a read-modify-write take row locks (SELECT ... FOR UPDATE). PostgreSQL needs
 * them; SQLite has one writer at a time, so a transaction already excludes every other writer
 * (and has no FOR UPDATE).
 */
export const needsRowLocks = (dialect: DialectName): boolean => dialect === 'postgres'

/** JSON columns come back as text from SQLite and already parsed from PostgreSQL's jsonb. */
export function fromJson<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T
}

export const toJson = (value: unknown): string => JSON.stringify(value)

/** Everything that differs between SQLite and PostgreSQL, in one place. */

export type DialectName = 'sqlite' | 'postgres'

interface DriverError {
  code?: unknown
}

const codeOf = (error: unknown): unknown => (error as DriverError | null)?.code

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
  'SQLITE_IOERR',
  'SQLITE_FULL',
  'SQLITE_CANTOPEN',
])

/** The store could not be reached or is overloaded: the request may succeed if retried. */
export function isStoreUnavailable(error: unknown): boolean {
  const code = codeOf(error)
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('SQLITE_IOERR')))
    return true
  const message = error instanceof Error ? error.message : ''
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
    message,
  )
}

/**
 * Whether reads for a read-modify-write take row locks (SELECT ... FOR UPDATE). PostgreSQL needs
 * them; SQLite has one writer at a time, so a transaction already excludes every other writer.
 */
export const usesRowLocks = (dialect: DialectName): boolean => dialect === 'postgres'

/** JSON columns come back as text from SQLite and already parsed from PostgreSQL's jsonb. */
export function fromJson<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T
}

export const toJson = (value: unknown): string => JSON.stringify(value)

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

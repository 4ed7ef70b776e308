import { describe, expect, it } from 'vitest'
import {
  isDriverError,
  isForeignKeyViolation,
  isStalePlan,
  isUniqueViolation,
} from '../../src/store/dialect.js'
import { rethrowStoreError, StoreUnavailableError } from '../../src/store/errors.js'

const driverError = (code: string, message = 'x') => Object.assign(new Error(message), { code })
const raised = (error: unknown) => {
  try {
    rethrowStoreError(error)
  } catch (thrown) {
    return thrown
  }
}

describe('the store’s outage errors', () => {
  it.each([
    'ECONNREFUSED',
    'ECONNRESET',
    '57P01',
    '57P03',
    '53300',
    '08006',
    '57014',
    'SQLITE_BUSY',
    'SQLITE_FULL',
    'SQLITE_IOERR_WRITE',
  ])('a driver error %s becomes StoreUnavailableError, keeping its cause', (code) => {
    const cause = driverError(code)
    const error = raised(cause)
    expect(error).toBeInstanceOf(StoreUnavailableError)
    expect((error as Error).cause).toBe(cause)
  })

  it('a lost connection, named only in the message, is an outage', () => {
    expect(raised(new Error('Connection terminated unexpectedly'))).toBeInstanceOf(StoreUnavailableError)
  })

  it.each([
    '23505',
    'SQLITE_CONSTRAINT_UNIQUE',
    '42P01',
    'SQLITE_ERROR',
  ])('a statement error %s passes through unchanged', (code) => {
    const cause = driverError(code)
    expect(raised(cause)).toBe(cause)
  })
})

describe('what a driver’s error code means (store/dialect.ts, the one place that reads them)', () => {
  it.each([
    ['23505', 'unique'],
    ['SQLITE_CONSTRAINT_PRIMARYKEY', 'unique'],
    ['SQLITE_CONSTRAINT_UNIQUE', 'unique'],
    ['23503', 'foreign key'],
    ['SQLITE_CONSTRAINT_FOREIGNKEY', 'foreign key'],
    ['0A000', 'stale plan'],
    ['42P01', 'other'],
    ['SQLITE_ERROR', 'other'],
  ])('%s is a driver error: %s', (code, kind) => {
    const error = driverError(code)
    expect(isDriverError(error)).toBe(true)
    expect(isUniqueViolation(error)).toBe(kind === 'unique')
    expect(isForeignKeyViolation(error)).toBe(kind === 'foreign key')
    expect(isStalePlan(error)).toBe(kind === 'stale plan')
  })

  it.each([
    'ECONNRESET',
    'validation_error',
    'ERR_HTTP_REQUEST_TIMEOUT',
  ])('%s is not a driver error', (code) => {
    expect(isDriverError(driverError(code))).toBe(false)
  })
})

import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  QueryResult,
  TransactionSettings,
} from 'kysely'
import { isOutage } from './dialect.js'

/**
 * The store could not be reached, or is overloaded: the request may succeed if retried. The
 * store raises it, and only the store: the HTTP layer answers 503 for it and for nothing else, so
 * a network error from any other client can never read as a store outage.
 */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the store is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
    this.name = 'StoreUnavailableError'
  }
}

/** Rethrows a driver's error, as `StoreUnavailableError` when it means an outage. */
export function rethrowStoreError(error: unknown): never {
  if (error instanceof StoreUnavailableError || !isOutage(error)) throw error
  throw new StoreUnavailableError(error)
}

/**
 * A dialect whose every connection, query and transaction step raises `StoreUnavailableError`
 * for an outage. Connections are wrapped; the driver's own steps receive its own connections.
 */
export function withOutageErrors(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => new OutageDriver(dialect.createDriver()),
  }
}

class OutageDriver implements Driver {
  private readonly inner = new WeakMap<DatabaseConnection, DatabaseConnection>()

  constructor(private readonly driver: Driver) {}

  init(): Promise<void> {
    return this.driver.init().catch(rethrowStoreError)
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.driver.acquireConnection().catch(rethrowStoreError)
    const wrapped: DatabaseConnection = {
      executeQuery: <R>(query: CompiledQuery): Promise<QueryResult<R>> =>
        connection.executeQuery<R>(query).catch(rethrowStoreError),
      streamQuery: <R>(query: CompiledQuery, chunkSize?: number) =>
        connection.streamQuery<R>(query, chunkSize),
    }
    this.inner.set(wrapped, connection)
    return wrapped
  }

  private unwrap(connection: DatabaseConnection): DatabaseConnection {
    return this.inner.get(connection) ?? connection
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.driver.beginTransaction(this.unwrap(connection), settings).catch(rethrowStoreError)
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.driver.commitTransaction(this.unwrap(connection)).catch(rethrowStoreError)
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.driver.rollbackTransaction(this.unwrap(connection)).catch(rethrowStoreError)
  }

  async savepoint(
    connection: DatabaseConnection,
    name: string,
    compile: Parameters<NonNullable<Driver['savepoint']>>[2],
  ): Promise<void> {
    if (!this.driver.savepoint) throw new Error('savepoints are not supported')
    await this.driver.savepoint(this.unwrap(connection), name, compile).catch(rethrowStoreError)
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: Parameters<NonNullable<Driver['rollbackToSavepoint']>>[2],
  ): Promise<void> {
    if (!this.driver.rollbackToSavepoint) throw new Error('savepoints are not supported')
    await this.driver.rollbackToSavepoint(this.unwrap(connection), name, compile).catch(rethrowStoreError)
  }

  async releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: Parameters<NonNullable<Driver['releaseSavepoint']>>[2],
  ): Promise<void> {
    if (!this.driver.releaseSavepoint) throw new Error('savepoints are not supported')
    await this.driver.releaseSavepoint(this.unwrap(connection), name, compile).catch(rethrowStoreError)
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.driver.releaseConnection(this.unwrap(connection))
  }

  destroy(): Promise<void> {
    return this.driver.destroy()
  }
}

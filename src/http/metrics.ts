import type { FastifyInstance } from 'fastify'
import type { Metrics } from '../metrics.js'
import { StoreUnavailableError } from '../store/errors.js'

/** A driver's own error: SQLite's `SQLITE_…` codes, PostgreSQL's five-character SQLSTATEs. */
const DRIVER_CODE = /^(SQLITE_[A-Z_]+|[0-9A-Z]{5})$/

/**
 * Records every answered request (by its route's pattern, never its URL) and the store errors
 * met while serving one. Installed only when metrics are on: with `METRICS_PORT=0` requests pay
 * nothing.
 */
export function installMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.request(request.routeOptions.url, request.method, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
  app.addHook('onError', (_request, _reply, error, done) => {
    if (error instanceof StoreUnavailableError) metrics.storeError('unavailable')
    else {
      const code = (error as { code?: unknown }).code
      if (typeof code === 'string' && DRIVER_CODE.test(code)) metrics.storeError('query')
    }
    done()
  })
}

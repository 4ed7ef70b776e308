import type { FastifyInstance } from 'fastify'
import type { Metrics } from '../metrics.js'
import { isDriverError } from '../store/dialect.js'
import { StoreUnavailableError } from '../store/errors.js'

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
    else if (isDriverError(error)) metrics.storeError('query')
    done()
  })
}

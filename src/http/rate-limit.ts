import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'

/**
 * Per-key rate limits on every authenticated route (RATE_LIMIT_PER_MINUTE; 0 turns them off).
 * The hook runs at route level, after authentication, so it counts per API key. Answers carry
 * the RateLimit-* headers; a 429 also carries Retry-After.
 */
export async function installRateLimit(app: FastifyInstance, perMinute: number): Promise<void> {
  if (perMinute === 0) return
  await app.register(rateLimit, {
    global: true,
    max: perMinute,
    timeWindow: 60_000,
    enableDraftSpec: true,
    keyGenerator: (request) => request.principal?.keyId ?? request.ip,
    allowList: (request) => !request.routeOptions.config.scope,
    errorResponseBuilder: (_request, context) =>
      new AppError(
        'rate_limited',
        `This API key made more than ${context.max} requests in a minute; retry in ${context.after}`,
      ),
  })
}

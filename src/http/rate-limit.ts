import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import type { Config } from '../config.js'
import { AppError } from '../errors.js'

/**
 * Per-key rate limits on every authenticated route (RATE_LIMIT_PER_MINUTE; 0 turns them off).
 * The hook runs at route level, after authentication, so it counts per API key. Answers carry
 * the RateLimit-* headers; a 429 also carries Retry-After.
 *
 * With REDIS_URL the counters live in Redis and every instance shares them; without it each
 * instance counts on its own. If Redis is unreachable, requests are let through (and logged)
 * rather than refused: the limit protects capacity, it is not an access control.
 */
export async function installRateLimit(app: FastifyInstance, config: Config): Promise<void> {
  if (config.rateLimitPerMinute === 0) return
  let redis: Redis | undefined
  if (config.redisUrl) {
    // Loaded only when configured: most instances never need it.
    const { Redis } = await import('ioredis')
    redis = new Redis(config.redisUrl, {
      connectTimeout: 2000,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      lazyConnect: false,
    })
    redis.on('error', (error) =>
      app.log.warn({ err: error }, 'redis unavailable: rate limits are not enforced'),
    )
    app.addHook('onClose', async () => {
      redis?.disconnect()
    })
  }
  // Public routes (no scope: health, readiness, the OpenAPI document) are never limited. Marking
  // them as the routes are added spares every limited request a check of its route.
  app.addHook('onRoute', (route) => {
    if (!route.config?.scope) route.config = { ...route.config, rateLimit: false }
  })
  await app.register(rateLimit, {
    global: true,
    max: config.rateLimitPerMinute,
    timeWindow: 60_000,
    enableDraftSpec: true,
    ...(redis ? { redis, nameSpace: 'warden-rate-limit:', skipOnError: true } : {}),
    keyGenerator: (request) => request.principal?.keyId ?? request.ip,
    errorResponseBuilder: (_request, context) =>
      new AppError(
        'rate_limited',
        `This API key made more than ${context.max} requests in a minute; retry in ${context.after}`,
      ),
  })
}

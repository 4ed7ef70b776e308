import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

/**
 * Fastify answers a known path with an unknown method as 404; the contract wants 405 with an
 * `Allow` header. Collect every route as it is added, then fill each path's missing methods.
 */
export function collectRoutes(
  app: FastifyInstance,
  include: (url: string) => boolean,
): Map<string, Set<string>> {
  const routes = new Map<string, Set<string>>()
  app.addHook('onRoute', (route) => {
    if (!include(route.url)) return
    const methods = routes.get(route.url) ?? new Set<string>()
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) methods.add(m)
    routes.set(route.url, methods)
  })
  return routes
}

export function addMethodNotAllowedRoutes(app: FastifyInstance, routes: Map<string, Set<string>>): void {
  for (const [url, methods] of [...routes]) {
    const allow = METHODS.filter((m) => methods.has(m)).join(', ')
    const missing = METHODS.filter((m) => !methods.has(m))
    if (missing.length === 0) continue
    app.route({
      method: missing,
      url,
      schema: { hide: true },
      handler: async (request) => {
        throw new AppError(
          'method_not_allowed',
          `${request.method} is not allowed here; use ${allow}`,
          undefined,
          {
            allow,
          },
        )
      },
    })
  }
}

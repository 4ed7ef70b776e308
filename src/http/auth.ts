import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'
import { hasScope, type KeysService, type Principal, type Scope } from '../services/keys.service.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a key needs for this route; routes without one are public. */
    scope?: Scope
  }
  interface FastifyRequest {
    /** The authenticated caller; set on every /v1 route before the handler runs. */
    principal: Principal
  }
}

const REALM = 'Bearer realm="warden"'
const INVALID_TOKEN = `${REALM}, error="invalid_token"`

/** `Bearer <token>`, scheme case-insensitive; null when no usable token was sent. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null
  const match = /^bearer +([\x21-\x7e]+) *$/i.exec(header)
  return match?.[1] ?? null
}

/**
 * Authenticates every route in this scope that declares a `scope`. It runs on onRequest, before
 * the body is read or parsed, so an anonymous client never gets further than a 401.
 */
export function installAuth(app: FastifyInstance, keys: KeysService): void {
  app.decorateRequest('principal', null as unknown as Principal)
  app.addHook('onRequest', async (request) => {
    const scope = request.routeOptions.config.scope
    if (!scope) return
    const header = request.headers.authorization
    const token = bearerToken(header)
    if (token === null) {
      throw new AppError(
        'unauthenticated',
        header
          ? 'The Authorization header must be "Bearer <key>"'
          : 'Send an API key: Authorization: Bearer <key>',
        undefined,
        { 'www-authenticate': REALM },
      )
    }
    const principal = await keys.authenticate(token)
    if (!principal) {
      throw new AppError('unauthenticated', 'The API key is unknown, revoked or expired', undefined, {
        'www-authenticate': INVALID_TOKEN,
      })
    }
    if (!hasScope(principal, scope)) {
      throw new AppError('forbidden', `This API key lacks the scope ${scope}`)
    }
    request.principal = principal
  })
}

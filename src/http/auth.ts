import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'
import type { AuthenticationService } from '../services/authentication.service.js'
import { hasScope, type Principal, type Scope } from '../services/credentials.js'

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

function unauthenticated(header: string | undefined): AppError {
  return new AppError(
    'unauthenticated',
    header
      ? 'The Authorization header must be "Bearer <key>"'
      : 'Send an API key: Authorization: Bearer <key>',
    undefined,
    { 'www-authenticate': REALM },
  )
}

/** Sets `request.principal` for a usable key with the route's scope; the error otherwise. */
function admit(request: FastifyRequest, scope: Scope, principal: Principal | null): AppError | undefined {
  if (!principal) {
    return new AppError('unauthenticated', 'The API key is unknown, revoked or expired', undefined, {
      'www-authenticate': INVALID_TOKEN,
    })
  }
  if (!hasScope(principal, scope)) return new AppError('forbidden', `This API key lacks the scope ${scope}`)
  request.principal = principal
  return undefined
}

/**
 * Authentication for every route that declares a `scope`, as an onRequest step: it runs before
 * the body is read or parsed, so an anonymous client never gets further than a 401. A key seen
 * in the last moments is admitted without waiting on the store (see AuthenticationService.cached).
 */
export function installAuth(
  app: FastifyInstance,
  keys: Pick<AuthenticationService, 'cached' | 'authenticate'>,
): (request: FastifyRequest, done: (error?: Error) => void) => void {
  app.decorateRequest('principal', null as unknown as Principal)
  return (request, done) => {
    const scope = request.routeOptions.config.scope
    if (!scope) return done()
    const header = request.headers.authorization
    const token = bearerToken(header)
    if (token === null) return done(unauthenticated(header))
    const hit = keys.cached(token)
    if (hit !== undefined) return done(admit(request, scope, hit))
    keys.authenticate(token).then(
      (principal) => done(admit(request, scope, principal)),
      (error: Error) => done(error),
    )
  }
}

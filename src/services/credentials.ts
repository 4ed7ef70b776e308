import { createHash, randomBytes } from 'node:crypto'
import { v7 as uuidv7 } from 'uuid'
import type { Clock } from '../clock.js'
import { SCOPES, type Scope } from '../schemas/api-keys.js'
import type { Store } from '../store/database.js'
import { toJson } from '../store/dialect.js'
import { insertApiKey } from '../store/keys.repository.js'
import type { ApiKeyRow } from '../store/tables.js'

/**
 * What an API key is: its secret, how the store keeps it, who it makes the caller. Shared by
 * authentication, the key management API and the operator's commands.
 */

export { SCOPES, type Scope }

export const DEFAULT_WORKSPACE = 'default'
export const KEY_PREFIX = 'wdn_'

/** Who is calling: resolved from the bearer token on every /v1 request. */
export interface Principal {
  keyId: string
  workspaceId: string
  scopes: readonly Scope[]
}

export const hasScope = (principal: Principal, scope: Scope): boolean =>
  principal.scopes.includes('admin') || principal.scopes.includes(scope)

/** 256 random bits behind a recognisable prefix. */
export const generateSecret = (): string => KEY_PREFIX + randomBytes(32).toString('base64url')

/** Secrets carry 256 bits of entropy, so one fast SHA-256 is enough: there is nothing to brute-force. */
export const hashSecret = (secret: string): string =>
  createHash('sha256').update(secret, 'utf8').digest('hex')

/** What a key list may show of a secret: enough to recognise it, never enough to use it. */
const displayPrefix = (secret: string): string => secret.slice(0, KEY_PREFIX.length + 6)

export interface NewKey {
  workspaceId: string
  name: string | null
  scopes: readonly Scope[]
  expiresAt: number | null
  /** A chosen secret (WARDEN_ADMIN_KEY); absent, a new one is generated. */
  secret?: string
}

/** Stores a new key (its hash only) and returns the row and the secret, to be shown once. */
export async function storeNewKey(
  store: Store,
  clock: Clock,
  input: NewKey,
): Promise<{ key: ApiKeyRow; secret: string }> {
  const secret = input.secret ?? generateSecret()
  const key = await store.write(({ db }) =>
    insertApiKey(db, {
      id: uuidv7(),
      workspace_id: input.workspaceId,
      name: input.name,
      key_hash: hashSecret(secret),
      prefix: displayPrefix(secret),
      scopes: toJson([...new Set(input.scopes)]),
      created: clock.nowSeconds(),
      expires_at: input.expiresAt,
      revoked_at: null,
    }),
  )
  return { key, secret }
}

import { timingSafeEqual } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { Store } from '../store/database.js'
import { fromJson } from '../store/dialect.js'
import { findApiKeyByHash } from '../store/keys.repository.js'
import { hashSecret, type Principal, type Scope } from './credentials.js'

/** How long an authentication result is reused: half the one-second bound on cross-instance revocation. */
export const AUTH_CACHE_MS = 500
const AUTH_CACHE_SIZE = 10_000

interface CachedKey {
  principal: Principal
  expiresAt: number | null
}

/** Resolves bearer tokens to principals, with a short-lived cache. */
export class AuthenticationService {
  /**
   * Recent lookups, by the presented secret: a hit costs one map lookup, not a SHA-256. An entry
   * lives at most AUTH_CACHE_MS, so a key revoked on another instance (or with the CLI) stops
   * working everywhere within that time; a revocation through this instance clears the cache at
   * once (`forget`). Expiry is checked on every request. The secrets live only in this process's
   * memory, as they already do while their request is handled.
   */
  private readonly cache = new Map<string, { until: number; key: CachedKey | null }>()

  constructor(private readonly deps: { store: Store; clock: Clock }) {}

  /**
   * The cached answer for a bearer token, without touching the store: the principal, null when
   * the key is unknown, revoked or expired, or undefined when only `authenticate` can tell.
   */
  cached(secret: string): Principal | null | undefined {
    const entry = this.cache.get(secret)
    if (!entry || entry.until <= this.deps.clock.nowMs()) return undefined
    return this.usable(entry.key)
  }

  /** Resolves a bearer token to its principal, or null when unknown, revoked or expired. */
  async authenticate(secret: string): Promise<Principal | null> {
    const hit = this.cached(secret)
    if (hit !== undefined) return hit
    const key = await this.lookup(hashSecret(secret))
    if (this.cache.size >= AUTH_CACHE_SIZE) this.cache.clear()
    this.cache.set(secret, { until: this.deps.clock.nowMs() + AUTH_CACHE_MS, key })
    return this.usable(key)
  }

  /** Drops every cached result: a key revoked through this instance fails on its next request. */
  forget(): void {
    this.cache.clear()
  }

  /** The principal of a key found in the store, unless it has expired since. */
  private usable(key: CachedKey | null): Principal | null {
    return key === null || (key.expiresAt !== null && key.expiresAt <= this.deps.clock.nowSeconds())
      ? null
      : key.principal
  }

  private async lookup(hash: string): Promise<CachedKey | null> {
    const row = await findApiKeyByHash(this.deps.store.statements, hash)
    if (!row) return null
    // The index lookup already matched; compare again in constant time so that no code path
    // depends on how much of a hash matched.
    if (!timingSafeEqual(Buffer.from(row.key_hash, 'hex'), Buffer.from(hash, 'hex'))) return null
    if (row.revoked_at !== null) return null
    return {
      principal: { keyId: row.id, workspaceId: row.workspace_id, scopes: fromJson<Scope[]>(row.scopes) },
      expiresAt: row.expires_at,
    }
  }
}

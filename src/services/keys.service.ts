import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { v7 as uuidv7 } from 'uuid'
import { invalid, notFound } from '../errors.js'
import {
  type ApiKey,
  type ApiKeyCreate,
  type ApiKeyCreated,
  SCOPES,
  type Scope,
} from '../schemas/api-keys.js'
import type { Store } from '../store/database.js'
import { fromJson, isUniqueViolation, toJson } from '../store/dialect.js'
import {
  countWorkspaces,
  findApiKeyByHash,
  findWorkspaceByName,
  insertApiKey,
  insertWorkspace,
  listApiKeys,
  listApiKeysPage,
  reinstateApiKey,
  revokeApiKey,
} from '../store/keys.repository.js'
import type { ApiKeyRow, WorkspaceRow } from '../store/tables.js'
import { nowSeconds } from './clock.js'
import { decodeTextCursor, type Page, toPage } from './pagination.js'

export { SCOPES, type Scope }

export const DEFAULT_WORKSPACE = 'default'
export const KEY_PREFIX = 'wdn_'

/** Who is calling: resolved from the bearer token on every /v1 request. */
export interface Principal {
  keyId: string
  workspaceId: string
  scopes: readonly Scope[]
}

export interface ApiKeyInfo {
  id: string
  workspace_id: string
  workspace: string
  name: string | null
  prefix: string
  scopes: Scope[]
  created: number
  expires_at: number | null
  revoked_at: number | null
}

/** How long an authentication result is reused: half the one-second bound on cross-instance revocation. */
export const AUTH_CACHE_MS = 500
const AUTH_CACHE_SIZE = 10_000

interface CachedKey {
  principal: Principal
  expiresAt: number | null
}

export const hasScope = (principal: Principal, scope: Scope): boolean =>
  principal.scopes.includes('admin') || principal.scopes.includes(scope)

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: fromJson<Scope[]>(row.scopes),
    created: row.created,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
  }
}

/** 256 random bits behind a recognisable prefix. */
export const generateSecret = (): string => KEY_PREFIX + randomBytes(32).toString('base64url')

/** Secrets carry 256 bits of entropy, so one fast SHA-256 is enough: there is nothing to brute-force. */
export const hashSecret = (secret: string): string =>
  createHash('sha256').update(secret, 'utf8').digest('hex')

/** What a key list may show of a secret: enough to recognise it, never enough to use it. */
/** The principal of a key found in the store, unless it has expired since. */
const usable = (key: CachedKey | null): Principal | null =>
  key === null || (key.expiresAt !== null && key.expiresAt <= nowSeconds()) ? null : key.principal

const displayPrefix = (secret: string): string => secret.slice(0, KEY_PREFIX.length + 6)

export class KeysService {
  /**
   * Recent lookups, by the presented secret: a hit costs one map lookup, not a SHA-256. An entry
   * lives at most AUTH_CACHE_MS, so a key revoked on another instance (or with the CLI) stops
   * working everywhere within that time; a revocation through this instance clears the cache at
   * once. Expiry is checked on every request. The secrets live only in this process's memory, as
   * they already do while their request is handled.
   */
  private readonly cache = new Map<string, { until: number; key: CachedKey | null }>()

  constructor(private readonly store: Store) {}

  /**
   * The cached answer for a bearer token, without touching the store: the principal, null when
   * the key is unknown, revoked or expired, or undefined when only `authenticate` can tell.
   */
  cached(secret: string): Principal | null | undefined {
    const entry = this.cache.get(secret)
    if (!entry || entry.until <= Date.now()) return undefined
    return usable(entry.key)
  }

  /** Resolves a bearer token to its principal, or null when unknown, revoked or expired. */
  async authenticate(secret: string): Promise<Principal | null> {
    const hit = this.cached(secret)
    if (hit !== undefined) return hit
    const key = await this.lookup(hashSecret(secret))
    if (this.cache.size >= AUTH_CACHE_SIZE) this.cache.clear()
    this.cache.set(secret, { until: Date.now() + AUTH_CACHE_MS, key })
    return usable(key)
  }

  private async lookup(hash: string): Promise<CachedKey | null> {
    const row = await findApiKeyByHash(this.store.db, hash)
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

  async createWorkspace(name: string): Promise<WorkspaceRow> {
    return this.store.write((db) => insertWorkspace(db, { id: uuidv7(), name, created: nowSeconds() }))
  }

  async findWorkspace(name: string): Promise<WorkspaceRow | undefined> {
    return findWorkspaceByName(this.store.db, name)
  }

  async createKey(input: {
    workspaceId: string
    name: string | null
    scopes: readonly Scope[]
    expiresAt: number | null
    secret?: string
  }): Promise<{ key: ApiKeyRow; secret: string }> {
    const secret = input.secret ?? generateSecret()
    const key = await this.store.write((db) =>
      insertApiKey(db, {
        id: uuidv7(),
        workspace_id: input.workspaceId,
        name: input.name,
        key_hash: hashSecret(secret),
        prefix: displayPrefix(secret),
        scopes: toJson([...new Set(input.scopes)]),
        created: nowSeconds(),
        expires_at: input.expiresAt,
        revoked_at: null,
      }),
    )
    return { key, secret }
  }

  async listKeys(workspaceId?: string): Promise<ApiKeyInfo[]> {
    const rows = await listApiKeys(this.store.db, workspaceId)
    return rows.map((row) => ({
      id: row.id,
      workspace_id: row.workspace_id,
      workspace: row.workspace_name,
      name: row.name,
      prefix: row.prefix,
      scopes: fromJson<Scope[]>(row.scopes),
      created: row.created,
      expires_at: row.expires_at,
      revoked_at: row.revoked_at,
    }))
  }

  /** Creates a key in the caller's workspace; the answer holds the secret, shown this once. */
  async create(workspaceId: string, input: ApiKeyCreate): Promise<ApiKeyCreated> {
    const expiresAt = input.expires_at ?? null
    if (expiresAt !== null && expiresAt <= nowSeconds()) {
      throw invalid([{ pointer: '/expires_at', detail: 'must be in the future' }])
    }
    const { key, secret } = await this.createKey({
      workspaceId,
      name: input.name,
      scopes: input.scopes,
      expiresAt,
    })
    return { ...toApiKey(key), key: secret }
  }

  async listPage(workspaceId: string, limit: number, cursor?: string): Promise<Page<ApiKey>> {
    const after = decodeTextCursor(cursor)
    const rows = await listApiKeysPage(this.store.db, workspaceId, after, limit + 1)
    return toPage(rows, limit, (row) => row.id, toApiKey)
  }

  /** Revokes a key of the caller's workspace; 404 for a key that is not there. */
  async revoke(workspaceId: string, id: string): Promise<void> {
    if (!(await this.revokeKey(id, workspaceId))) throw notFound(`No API key "${id}" in this workspace`)
  }

  /** Returns false when no such key exists. The key fails from the next request on. */
  async revokeKey(id: string, workspaceId?: string): Promise<boolean> {
    const found = await this.store.write((db) => revokeApiKey(db, id, nowSeconds(), workspaceId))
    this.cache.clear()
    return found
  }

  /**
   * Makes sure someone can administer a new store. With `adminKey`, that exact secret becomes (or
   * stays) an admin key of workspace `default`. Without it, an empty store gets workspace
   * `default` and one new admin key, whose secret is returned so the caller can show it once.
   */
  async bootstrap(adminKey: string | null): Promise<{ createdSecret: string | null }> {
    if (adminKey !== null) {
      const workspace = await this.ensureWorkspace(DEFAULT_WORKSPACE)
      const existing = await findApiKeyByHash(this.store.db, hashSecret(adminKey))
      if (existing) {
        if (existing.workspace_id !== workspace.id) {
          throw new Error('WARDEN_ADMIN_KEY is already a key of another workspace')
        }
        await this.store.write((db) => reinstateApiKey(db, existing.id, toJson(['admin'])))
      } else {
        await this.createKey({
          workspaceId: workspace.id,
          name: 'WARDEN_ADMIN_KEY',
          scopes: ['admin'],
          expiresAt: null,
          secret: adminKey,
        }).catch((error: unknown) => {
          // Another instance starting at the same moment inserted it first.
          if (!isUniqueViolation(error)) throw error
        })
      }
      return { createdSecret: null }
    }
    if ((await countWorkspaces(this.store.db)) > 0) return { createdSecret: null }
    let workspace: WorkspaceRow
    try {
      workspace = await this.createWorkspace(DEFAULT_WORKSPACE)
    } catch (error) {
      // Another instance bootstrapped the same empty store first; its key is the one printed.
      if (isUniqueViolation(error)) return { createdSecret: null }
      throw error
    }
    const { secret } = await this.createKey({
      workspaceId: workspace.id,
      name: 'initial admin key',
      scopes: ['admin'],
      expiresAt: null,
    })
    return { createdSecret: secret }
  }

  private async ensureWorkspace(name: string): Promise<WorkspaceRow> {
    const found = await findWorkspaceByName(this.store.db, name)
    if (found) return found
    try {
      return await this.createWorkspace(name)
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
      const raced = await findWorkspaceByName(this.store.db, name)
      if (!raced) throw error
      return raced
    }
  }
}

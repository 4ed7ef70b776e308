import type { Clock } from '../clock.js'
import { invalid, notFound } from '../errors.js'
import type { ApiKey, ApiKeyCreate, ApiKeyCreated } from '../schemas/api-keys.js'
import type { Store } from '../store/database.js'
import { fromJson } from '../store/dialect.js'
import { listApiKeysPage, revokeApiKey } from '../store/keys.repository.js'
import type { ApiKeyRow } from '../store/tables.js'
import type { AuthenticationService } from './authentication.service.js'
import { type Scope, storeNewKey } from './credentials.js'
import { decodeTextCursor, type Page, toPage } from './support/pagination.js'

export function toApiKey(row: ApiKeyRow): ApiKey {
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

/** The key management API (`/v1/api-keys`): keys of the caller's workspace only. */
export class ApiKeysService {
  constructor(
    private readonly deps: {
      store: Store
      clock: Clock
      authentication: Pick<AuthenticationService, 'forget'>
    },
  ) {}

  /** Creates a key in the caller's workspace; the answer holds the secret, shown this once. */
  async create(workspaceId: string, input: ApiKeyCreate): Promise<ApiKeyCreated> {
    const expiresAt = input.expires_at ?? null
    if (expiresAt !== null && expiresAt <= this.deps.clock.nowSeconds()) {
      throw invalid([{ pointer: '/expires_at', detail: 'must be in the future' }])
    }
    const { key, secret } = await storeNewKey(this.deps.store, this.deps.clock, {
      workspaceId,
      name: input.name,
      scopes: input.scopes,
      expiresAt,
    })
    return { ...toApiKey(key), key: secret }
  }

  async listPage(workspaceId: string, limit: number, cursor?: string): Promise<Page<ApiKey>> {
    const after = decodeTextCursor(cursor)
    const rows = await listApiKeysPage(this.deps.store.db, workspaceId, after, limit + 1)
    return toPage(rows, limit, (row) => row.id, toApiKey)
  }

  /** Revokes a key of the caller's workspace; 404 for a key that is not there. */
  async revoke(workspaceId: string, id: string): Promise<void> {
    const found = await this.deps.store.write(({ db }) =>
      revokeApiKey(db, id, this.deps.clock.nowSeconds(), workspaceId),
    )
    this.deps.authentication.forget()
    if (!found) throw notFound(`No API key "${id}" in this workspace`)
  }
}

import { v7 as uuidv7 } from 'uuid'
import type { Clock } from '../clock.js'
import type { Store } from '../store/database.js'
import { isUniqueViolation, toJson } from '../store/dialect.js'
import {
  countWorkspaces,
  findApiKeyByHash,
  findWorkspaceByName,
  insertWorkspace,
  listApiKeys,
  listWorkspaces,
  reinstateApiKey,
  revokeApiKey,
  type WorkspaceListRow,
} from '../store/keys.repository.js'
import type { ApiKeyRow, WorkspaceRow } from '../store/tables.js'
import { toApiKey } from './api-keys.service.js'
import type { AuthenticationService } from './authentication.service.js'
import { DEFAULT_WORKSPACE, hashSecret, type NewKey, type Scope, storeNewKey } from './credentials.js'

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

/**
 * The operator's work on the store, outside the HTTP API: the `warden` commands (workspaces,
 * keys across workspaces) and the first start's bootstrap.
 */
export class OperatorService {
  constructor(
    private readonly deps: {
      store: Store
      clock: Clock
      authentication: Pick<AuthenticationService, 'forget'>
    },
  ) {}

  async createWorkspace(name: string): Promise<WorkspaceRow> {
    return this.deps.store.write(({ db }) =>
      insertWorkspace(db, { id: uuidv7(), name, created: this.deps.clock.nowSeconds() }),
    )
  }

  async findWorkspace(name: string): Promise<WorkspaceRow | undefined> {
    return findWorkspaceByName(this.deps.store.db, name)
  }

  /** Every workspace, oldest first, with how many of its keys work now. */
  async listWorkspaces(): Promise<WorkspaceListRow[]> {
    return listWorkspaces(this.deps.store.db, this.deps.clock.nowSeconds())
  }

  async createKey(input: NewKey): Promise<{ key: ApiKeyRow; secret: string }> {
    return storeNewKey(this.deps.store, this.deps.clock, input)
  }

  /** Every key, or a workspace's, with its workspace's name; never a secret. */
  async listKeys(workspaceId?: string): Promise<ApiKeyInfo[]> {
    const rows = await listApiKeys(this.deps.store.db, workspaceId)
    // The same fields as the API's key, with the workspace after the id.
    return rows.map((row) => {
      const { id, ...key } = toApiKey(row)
      return { id, workspace_id: row.workspace_id, workspace: row.workspace_name, ...key }
    })
  }

  /** Returns false when no such key exists. The key fails from the next request on. */
  async revokeKey(id: string): Promise<boolean> {
    const found = await this.deps.store.write(({ db }) => revokeApiKey(db, id, this.deps.clock.nowSeconds()))
    this.deps.authentication.forget()
    return found
  }

  /**
   * Makes sure someone can administer a new store. With `adminKey`, that exact secret becomes (or
   * stays) an admin key of workspace `default`. Without it, an empty store gets workspace
   * `default` and one new admin key, whose secret is returned so the caller can show it once.
   */
  async bootstrap(adminKey: string | null): Promise<{ createdSecret: string | null }> {
    const { store } = this.deps
    if (adminKey !== null) {
      const workspace = await this.ensureWorkspace(DEFAULT_WORKSPACE)
      const existing = await findApiKeyByHash(store.statements, hashSecret(adminKey))
      if (existing) {
        if (existing.workspace_id !== workspace.id) {
          throw new Error('WARDEN_ADMIN_KEY is already a key of another workspace')
        }
        await store.write(({ db }) => reinstateApiKey(db, existing.id, toJson(['admin'])))
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
    if ((await countWorkspaces(store.db)) > 0) return { createdSecret: null }
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
    const found = await this.findWorkspace(name)
    if (found) return found
    try {
      return await this.createWorkspace(name)
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
      const raced = await this.findWorkspace(name)
      if (!raced) throw error
      return raced
    }
  }
}

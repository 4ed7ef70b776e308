import type { WorkspaceGrant } from '../environment.js'
import type { Store } from '../store/database.js'
import { findWorkspaceById } from '../store/keys.repository.js'

/**
 * Whether a workspace may use what the operator grants to some workspaces by name
 * (PROVIDER_<NAME>_WORKSPACES; GUARD_<NAME>_WORKSPACES alike). A workspace's name never
 * changes, so each is read from the store once.
 */
export class WorkspaceGrants {
  private readonly names = new Map<string, string>()

  constructor(private readonly deps: { store: Store }) {}

  /** True when `grant` is null (every workspace) or names the workspace. */
  async allows(grant: WorkspaceGrant, workspaceId: string): Promise<boolean> {
    if (grant === null) return true
    let name = this.names.get(workspaceId)
    if (name === undefined) {
      name = (await findWorkspaceById(this.deps.store.db, workspaceId))?.name
      if (name === undefined) return false
      this.names.set(workspaceId, name)
    }
    return grant.has(name)
  }
}

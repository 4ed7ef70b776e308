/**
 * The guard detectors as evaluation asks them (`GuardScorer`, src/rules/evaluate.ts): one client
 * per configured guard (src/guards/client.ts), the workspace grants applied
 * (GUARD_<NAME>_WORKSPACES), escalations and calls counted.
 */
import { LRUCache } from 'lru-cache'
import type { WorkspaceGrant } from '../environment.js'
import { createGuardClient, type GuardCallReport, type GuardClient } from '../guards/client.js'
import type { GuardConfig, GuardDirectory } from '../guards/config.js'
import type { Band } from '../rules/band.js'
import type { GuardReply, GuardScorer } from '../rules/evaluate.js'
import { ScorerError } from '../scoring/scorer.js'

export interface GuardScorerOptions {
  /**
   * Whether a workspace (by id) is one a grant names (by workspace name): the store knows the
   * name. Without it, only guards granted to every workspace are available.
   */
  allows?: (grant: WorkspaceGrant, workspaceId: string) => Promise<boolean>
  /** Told of every question's outcome (metrics). */
  onCall?: (call: GuardCallReport) => void
  /** Told of every text a cascade sent to a guard (metrics). */
  onEscalation?: (detector: string, ruleType: string) => void
}

type Available = ReadonlyMap<string, { cascade: Band | null }>

/** The guards and what evaluation and validation ask of them. */
export interface Guards extends GuardScorer {
  readonly directory: GuardDirectory
  /**
   * Reads which guards the workspace is granted (its name from the store, once): call before
   * `available`, `granted` or `ask` for a workspace, which read what this found.
   */
  prepare(workspaceId: string): Promise<void> | undefined
  /** Whether the workspace may use the guard (after `prepare`). */
  granted(name: string, workspaceId: string): boolean
}

/** The guards of `directory`; null when none is configured. */
export function createGuards(directory: GuardDirectory, options: GuardScorerOptions = {}): Guards | null {
  if (directory.all.length === 0) return null
  const clients = new Map<string, GuardClient>()
  for (const config of directory.all)
    clients.set(config.name, createGuardClient(config, options.onCall ? { onCall: options.onCall } : {}))
  const global = directory.all.filter((g) => g.workspaces === null)
  const restricted = directory.all.filter((g) => g.workspaces !== null)
  const everywhere = availableTo(global)
  // The guards each workspace may use, by workspace id: grants never change while the process runs.
  const byWorkspace = new LRUCache<string, Available>({ max: 10_000 })
  const available = (workspaceId: string): Available =>
    restricted.length === 0 ? everywhere : (byWorkspace.get(workspaceId) ?? everywhere)
  return {
    directory,
    // Nothing to wait for once a workspace's grants are read: an evaluation then starts at once.
    prepare(workspaceId) {
      if (restricted.length === 0 || byWorkspace.has(workspaceId)) return undefined
      return (async () => {
        const allows = options.allows
        const granted: GuardConfig[] = [...global]
        if (allows)
          for (const guard of restricted) if (await allows(guard.workspaces, workspaceId)) granted.push(guard)
        byWorkspace.set(workspaceId, availableTo(granted))
      })()
    },
    available,
    granted: (name, workspaceId) => available(workspaceId).has(name),
    async ask(question, workspaceId, signal): Promise<GuardReply> {
      const client = clients.get(question.detector)
      // Checked when the rule was written; the configuration may have changed since.
      if (!client || !available(workspaceId).has(question.detector))
        return { error: `guard ${question.detector} is not configured for this workspace` }
      if (question.escalated) options.onEscalation?.(question.detector, question.request.ruleType)
      try {
        const ask = signal ? { workspace: workspaceId, signal } : { workspace: workspaceId }
        return { verdict: await client.score(question.request, ask) }
      } catch (error) {
        return {
          error: error instanceof ScorerError ? error.message : `guard ${question.detector} call failed`,
        }
      }
    },
  }
}

function availableTo(guards: readonly GuardConfig[]): Available {
  return new Map(guards.map((g) => [g.name, { cascade: g.cascade }]))
}

/** What a pooled task carries of the guards a workspace may use (PoolTask.guards), after `prepare`. */
export function guardsForTask(guards: GuardScorer | null, workspaceId: string): [string, Band | null][] {
  if (guards === null) return []
  return [...guards.available(workspaceId)].map(([name, { cascade }]) => [name, cascade])
}

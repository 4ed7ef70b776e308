import { FairQueue } from './fair-queue.js'

/**
 * Call slots shared fairly by workspaces (the judge's and each guard's): at most `slots` calls
 * in flight, at most `perWorkspace` of them one workspace's; those waiting are served a
 * workspace at a time in turn (FairQueue). A workspace whose calls hang holds at most its share,
 * and another workspace's call takes a free slot at once.
 */
export class WorkspaceSlots {
  #free: number
  readonly #held = new Map<string, number>()
  readonly #waiting = new FairQueue<() => void>()

  constructor(
    slots: number,
    private readonly perWorkspace: number,
  ) {
    this.#free = slots
  }

  /** Resolves once the workspace holds a slot; rejects with the signal's reason when it aborts first. */
  acquire(workspace: string, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason)
    if (this.#free > 0 && this.#waiting.size === 0 && this.#under(workspace)) {
      this.#take(workspace)
      return Promise.resolve()
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal.removeEventListener('abort', leave)
        resolve()
      }
      const leave = () => {
        this.#waiting.remove(workspace, grant)
        reject(signal.reason)
      }
      signal.addEventListener('abort', leave, { once: true })
      this.#waiting.push(workspace, grant)
      this.#grant()
    })
  }

  release(workspace: string): void {
    this.#free++
    const held = (this.#held.get(workspace) ?? 1) - 1
    if (held === 0) this.#held.delete(workspace)
    else this.#held.set(workspace, held)
    this.#grant()
  }

  #under(workspace: string): boolean {
    return (this.#held.get(workspace) ?? 0) < this.perWorkspace
  }

  #take(workspace: string): void {
    this.#free--
    this.#held.set(workspace, (this.#held.get(workspace) ?? 0) + 1)
  }

  #grant(): void {
    while (this.#free > 0) {
      const next = this.#waiting.shift((workspace) => this.#under(workspace))
      if (next === undefined) return
      this.#take(next.tenant)
      next.item()
    }
  }
}

/**
 * Work waiting for a shared resource (the evaluation pool's workers, the judge's slots), a queue
 * per tenant served in turn: each tenant's items leave in the order they came, and the tenants
 * take turns, one item each, so a tenant with a thousand items waiting delays another's next
 * item by at most one of its own. A tenant may be passed over for a turn (`eligible`), when it
 * holds its share of the resource already.
 */
export class FairQueue<T> {
  /** Queues by tenant, in the order their turns come (a tenant served goes to the back). */
  private readonly queues = new Map<string, T[]>()
  private count = 0

  /** Items waiting, across tenants. */
  get size(): number {
    return this.count
  }

  push(tenant: string, item: T): void {
    const queue = this.queues.get(tenant)
    if (queue) queue.push(item)
    else this.queues.set(tenant, [item])
    this.count++
  }

  /** Puts an item back at the head of its tenant's queue (work taken, then handed back). */
  unshift(tenant: string, item: T): void {
    const queue = this.queues.get(tenant)
    if (queue) queue.unshift(item)
    else this.queues.set(tenant, [item])
    this.count++
  }

  /**
   * The next item of the first tenant in turn that `eligible` accepts; that tenant's turn then
   * goes to the back. Undefined when no eligible tenant has an item.
   */
  shift(eligible: (tenant: string) => boolean = () => true): { tenant: string; item: T } | undefined {
    for (const [tenant, queue] of this.queues) {
      if (!eligible(tenant)) continue
      const item = queue.shift() as T
      this.count--
      this.queues.delete(tenant)
      if (queue.length > 0) this.queues.set(tenant, queue)
      return { tenant, item }
    }
    return undefined
  }

  /** Takes a waiting item out (its caller gave up); false when it is not waiting. */
  remove(tenant: string, item: T): boolean {
    const queue = this.queues.get(tenant)
    const at = queue?.indexOf(item) ?? -1
    if (!queue || at < 0) return false
    queue.splice(at, 1)
    this.count--
    if (queue.length === 0) this.queues.delete(tenant)
    return true
  }

  /** Every item waiting, emptying the queue. */
  drain(): T[] {
    const all = [...this.queues.values()].flat()
    this.queues.clear()
    this.count = 0
    return all
  }
}

import type { Kysely } from 'kysely'
import type { Database } from './tables.js'

/**
 * Every row of a table with a creation sequence, in that order, a page at a time: a big store is
 * never held in memory at once.
 */
export async function* pagesBySeq(
  db: Kysely<Database>,
  table: 'applications' | 'policies' | 'policy_tests',
  size = 1000,
): AsyncGenerator<Record<string, unknown>[]> {
  for (let after = 0; ; ) {
    const rows = await db
      .selectFrom(table)
      .selectAll()
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(size)
      .execute()
    if (rows.length > 0) yield rows
    const last = rows[rows.length - 1]
    if (!last || rows.length < size) return
    after = last.seq
  }
}

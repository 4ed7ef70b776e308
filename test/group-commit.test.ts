import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect, sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { GroupCommit } from '../src/store/group-commit.js'

describe('GroupCommit (SQLite)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'warden-gc-'))
  const database = new SQLite(join(dir, 'gc.db'))
  database.pragma('journal_mode = WAL')
  database.pragma('synchronous = FULL')
  database.exec('create table t (id text primary key, v integer not null)')
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database }) })
  const group = new GroupCommit(db)
  afterAll(async () => {
    await db.destroy()
    rmSync(dir, { recursive: true, force: true })
  })

  it('commits writes that arrive together in one transaction, and isolates a failing one', async () => {
    const before = { ...group.stats }
    const writes = Array.from({ length: 50 }, (_, i) =>
      group.run(async (trx) => {
        await trx
          .insertInto('t')
          .values({ id: `k${i}`, v: i })
          .execute()
        // Write 7 inserts, then fails: its insert must be rolled back alone.
        if (i === 7) throw new Error('boom')
        return i
      }),
    )
    const duplicate = group.run((trx) => trx.insertInto('t').values({ id: 'k1', v: 0 }).execute())
    const results = await Promise.allSettled([...writes, duplicate])
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(49)
    expect(results[7]).toMatchObject({ status: 'rejected', reason: new Error('boom') })
    expect(results[50]).toMatchObject({ status: 'rejected' })
    const rows = await sql<{ n: number }>`select count(*) as n from t`.execute(db)
    expect(rows.rows[0]?.n).toBe(49)
    expect(database.prepare('select id from t where id = ?').get('k7')).toBeUndefined()
    expect(group.stats.writes - before.writes).toBe(51)
    expect(group.stats.commits - before.commits).toBeLessThan(5)
  })

  it('runs a write that arrives during a commit in the next one', async () => {
    const first = group.run((trx) => trx.insertInto('t').values({ id: 'late-1', v: 1 }).execute())
    await first
    await group.run((trx) => trx.insertInto('t').values({ id: 'late-2', v: 2 }).execute())
    expect(database.prepare('select count(*) as n from t where id like ?').get('late-%')).toEqual({ n: 2 })
  })
})

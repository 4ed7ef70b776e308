import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect, sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { withStatementCache } from '../../src/store/database.js'
import { GroupCommit } from '../../src/store/group-commit.js'
import { runInsert } from '../../src/store/prepared-queries.js'

describe.each([
  ['through Kysely', false],
  ['directly on the write connection', true],
])('GroupCommit (SQLite, statements %s)', (_mode, direct) => {
  const dir = mkdtempSync(join(tmpdir(), 'warden-gc-'))
  const database = new SQLite(join(dir, 'gc.db'))
  database.pragma('journal_mode = WAL')
  database.pragma('synchronous = FULL')
  database.exec('create table t (id text primary key, v integer not null)')
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database }) })
  // The write connection's own statement runner, as the SQLite store builds it.
  const connection = withStatementCache(database).direct
  const group = new GroupCommit(db, direct ? connection : undefined)
  const insert = (trx: Kysely<any>, id: string, v: number) => runInsert(trx, 't', ['id', 'v'], { id, v })
  afterAll(async () => {
    await db.destroy()
    rmSync(dir, { recursive: true, force: true })
  })

  it('commits writes that arrive together in one transaction, and isolates a failing one', async () => {
    const before = { ...group.stats }
    const writes = Array.from({ length: 50 }, (_, i) =>
      group.run(async (trx) => {
        await insert(trx, `k${i}`, i)
        // Write 7 inserts, then fails: its insert must be rolled back alone.
        if (i === 7) throw new Error('boom')
        return i
      }),
    )
    const duplicate = group.run((trx) => insert(trx, 'k1', 0))
    const mixed = group.run(async (trx) => {
      await trx.insertInto('t').values({ id: 'built', v: 1 }).execute()
      await insert(trx, 'direct', 2)
    })
    const results = await Promise.allSettled([...writes, duplicate, mixed])
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(50)
    expect(results[7]).toMatchObject({ status: 'rejected', reason: new Error('boom') })
    expect(results[50]).toMatchObject({
      status: 'rejected',
      reason: { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' },
    })
    const rows = await sql<{ n: number }>`select count(*) as n from t`.execute(db)
    expect(rows.rows[0]?.n).toBe(51)
    expect(database.prepare('select id from t where id = ?').get('k7')).toBeUndefined()
    expect(database.prepare('select v from t where id = ?').get('k1')).toEqual({ v: 1 })
    expect(group.stats.writes - before.writes).toBe(52)
    expect(group.stats.commits - before.commits).toBeLessThan(5)
  })

  it('runs a write that arrives during a commit in the next one', async () => {
    const first = group.run((trx) => insert(trx, 'late-1', 1))
    await first
    await group.run((trx) => insert(trx, 'late-2', 2))
    expect(database.prepare('select count(*) as n from t where id like ?').get('late-%')).toEqual({ n: 2 })
  })

  it('leaves nothing behind when the commit itself fails', async () => {
    database.exec(
      'create table c (id text primary key, parent text references t(id) deferrable initially deferred)',
    )
    database.pragma('foreign_keys = ON')
    const results = await Promise.allSettled([
      group.run((trx) => insert(trx, 'kept-only-if-committed', 1)),
      // A deferred foreign key is checked at COMMIT: the whole batch fails with it.
      group.run((trx) => runInsert(trx, 'c', ['id', 'parent'], { id: 'orphan', parent: 'missing' })),
    ])
    database.pragma('foreign_keys = OFF')
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(database.prepare('select id from t where id = ?').get('kept-only-if-committed')).toBeUndefined()
    expect(database.inTransaction).toBe(false)
  })
})

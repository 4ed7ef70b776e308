import { once } from 'node:events'
import { mkdtempSync, rmSync, statSync, watch } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../src/store/errors.js'
import { GroupCommit, type GroupTransaction } from '../../src/store/group-commit.js'
import { SqliteWriter, writerDialect } from '../../src/store/sqlite-writer.js'
import { defineInsert, defineStatement, Utf8Text } from '../../src/store/statements.js'

describe('GroupCommit (SQLite, in the writer thread)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'warden-gc-'))
  // The write connection lives in the writer thread, as in the SQLite store; `database` only reads.
  const writer = new SqliteWriter(join(dir, 'gc.db'), { walTruncateBytes: 64 * 1_048_576 })
  writer.call('run', 'create table t (id text primary key, v integer not null)', [])
  const database = new SQLite(join(dir, 'gc.db'), { readonly: true })
  const db = new Kysely<any>({ dialect: writerDialect(writer, undefined) })
  const group = new GroupCommit(db, 'sqlite', writer)
  // Tables of this test only, outside the store's schema.
  const insertT = defineInsert<{ id: string; v: number }>('insertT', 't' as never, ['id', 'v'])
  const insertC = defineInsert<{ id: string; parent: string }>('insertC', 'c' as never, ['id', 'parent'])
  const insert = (tx: GroupTransaction<any>, id: string, v: number) => tx.statements.run(insertT, { id, v })
  afterAll(async () => {
    database.close()
    await db.destroy()
    rmSync(dir, { recursive: true, force: true })
  })

  it('commits writes that arrive together in one transaction, and isolates a failing one', async () => {
    const before = writer.commits
    const writes = Array.from({ length: 50 }, (_, i) =>
      group.run(async (tx) => {
        await insert(tx, `k${i}`, i)
        // Write 7 inserts, then fails: its insert must be rolled back alone.
        if (i === 7) throw new Error('boom')
        return i
      }),
    )
    const duplicate = group.run((tx) => insert(tx, 'k1', 0))
    const mixed = group.run(async (tx) => {
      await tx.db.insertInto('t').values({ id: 'built', v: 1 }).execute()
      await insert(tx, 'direct', 2)
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
    // 52 writes arrived in one turn: a few commits carried them all.
    expect(writer.commits - before).toBeLessThan(5)
  })

  it('fails a write at its next read once a statement it sent has failed, and only that write', async () => {
    const results = await Promise.allSettled([
      group.run(async (tx) => {
        await insert(tx, 'read-after-1', 1)
        await insert(tx, 'k2', 0) // a duplicate: sent, fails in the writer thread
        return tx.db.selectFrom('t').select('id').where('id', '=', 'read-after-1').execute()
      }),
      group.run((tx) => insert(tx, 'read-after-2', 2)),
    ])
    expect(results[0]).toMatchObject({ status: 'rejected', reason: { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' } })
    expect(results[1]).toMatchObject({ status: 'fulfilled' })
    expect(database.prepare('select id from t where id = ?').get('read-after-1')).toBeUndefined()
    expect(database.prepare('select id from t where id = ?').get('read-after-2')).toEqual({
      id: 'read-after-2',
    })
  })

  it('fails a whole commit whose BEGIN could not take the lock, and runs nothing of it', async () => {
    writer.call('run', 'pragma busy_timeout = 50', [])
    const other = new SQLite(join(dir, 'gc.db'))
    other.prepare('begin immediate').run()
    try {
      const results = await Promise.allSettled([
        group.run((tx) => insert(tx, 'locked-out', 1)),
        group.run((tx) => tx.db.selectFrom('t').select('id').execute()),
      ])
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
      expect(results[0]).toMatchObject({ reason: { code: 'SQLITE_BUSY' } })
    } finally {
      other.prepare('rollback').run()
      other.close()
      writer.call('run', 'pragma busy_timeout = 5000', [])
    }
    expect(database.prepare('select id from t where id = ?').get('locked-out')).toBeUndefined()
    await group.run((tx) => insert(tx, 'after-the-lock', 1))
    expect(database.prepare('select id from t where id = ?').get('after-the-lock')).toEqual({
      id: 'after-the-lock',
    })
  })

  it('runs a write that arrives during a commit in the next one', async () => {
    const first = group.run((tx) => insert(tx, 'late-1', 1))
    await first
    await group.run((tx) => insert(tx, 'late-2', 2))
    expect(database.prepare('select count(*) as n from t where id like ?').get('late-%')).toEqual({ n: 2 })
  })

  it('leaves nothing behind when the commit itself fails', async () => {
    await writer.request(
      'run',
      'create table c (id text primary key, parent text references t(id) deferrable initially deferred)',
    )
    const results = await Promise.allSettled([
      group.run((tx) => insert(tx, 'kept-only-if-committed', 1)),
      // A deferred foreign key is checked at COMMIT: the whole batch fails with it.
      group.run((tx) => tx.statements.run(insertC, { id: 'orphan', parent: 'missing' })),
    ])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(database.prepare('select id from t where id = ?').get('kept-only-if-committed')).toBeUndefined()
    // The failed transaction was rolled back: the next write commits on its own.
    await group.run((tx) => insert(tx, 'after-failure', 1))
    expect(database.prepare('select id from t where id = ?').get('after-failure')).toEqual({
      id: 'after-failure',
    })
  })
  it('moves a text given as UTF-8 bytes to the writer without a copy, and stores it as that text', async () => {
    await writer.request('run', 'create table d (id text primary key, doc text not null)')
    const insertD = defineStatement('insertD', (db, p: { id: string; doc: string | Utf8Text }) =>
      db.insertInto('d' as never).values({ id: p.id, doc: sql`cast(${p.doc} as text)` } as never),
    )
    const text = `{"a":"${'é😀'.repeat(50_000)}"}`
    const bytes = new TextEncoder().encode(text)
    // A view of part of a buffer is copied, not moved: the rest of the buffer stays usable.
    const shared = new Uint8Array(bytes.length + 8)
    shared.set(bytes, 8)
    const part = shared.subarray(8)
    await Promise.all([
      group.run((tx) => tx.statements.run(insertD, { id: 'bytes', doc: new Utf8Text(bytes) })),
      group.run((tx) => tx.statements.run(insertD, { id: 'part', doc: new Utf8Text(part) })),
      group.run((tx) => tx.statements.run(insertD, { id: 'string', doc: text })),
    ])
    // Moved: this thread holds nothing of it any more.
    expect(bytes.byteLength).toBe(0)
    expect(part.byteLength).toBe(shared.byteLength - 8)
    expect(Buffer.from(part).toString('utf8')).toBe(text)
    const rows = database.prepare('select id, doc, typeof(doc) as type from d order by id').all()
    expect(rows).toEqual([
      { id: 'bytes', doc: text, type: 'text' },
      { id: 'part', doc: text, type: 'text' },
      { id: 'string', doc: text, type: 'text' },
    ])
  })
})

describe('SqliteWriter when its thread is gone', () => {
  it('answers every later request with StoreUnavailableError, never a hang', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-writer-'))
    const writer = new SqliteWriter(join(dir, 'w.db'), { walTruncateBytes: 64 * 1_048_576 })
    try {
      writer.call('run', 'create table t (id text primary key)', [])
      // The thread closes its connection and ends, behind the writer's back, as a thread that
      // died would: the request after it is answered when the thread's end is known. The close's
      // answer and the thread's end race each other; the end may fail the close itself.
      await writer.request('close').catch((error) => expect(error).toBeInstanceOf(StoreUnavailableError))
      await expect(writer.request('begin')).rejects.toBeInstanceOf(StoreUnavailableError)
      expect(() => writer.call('run', 'select 1', [])).toThrow(StoreUnavailableError)
    } finally {
      // The checkpointer thread still has the files open: its end is awaited before they go.
      await writer.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('the checkpointer thread', () => {
  it('checkpoints on its own and truncates the write-ahead log past its bound', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-checkpoint-'))
    const path = join(dir, 'c.db')
    // A bound of one byte: every checkpoint truncates the log.
    const writer = new SqliteWriter(path, { walTruncateBytes: 1 })
    try {
      writer.call('run', 'create table t (id integer primary key, v text)', [])
      for (let i = 0; i < 12; i++)
        await writer.request('run', 'insert into t (v) values (?)', ['x'.repeat(5000)])
      const wal = `${path}-wal`
      // Watched before it is read: no change between the read and the wait goes unseen.
      const changes = watch(wal)
      try {
        expect(statSync(wal).size).toBeGreaterThan(0)
        // It runs after 5 commits, or once 50 ms pass without one: each change to the log is
        // looked at, with no deadline on the thread's speed beyond the test's own timeout.
        while (statSync(wal).size > 0) await once(changes, 'change')
      } finally {
        changes.close()
      }
      const reader = new SQLite(path, { readonly: true })
      expect(reader.prepare('select count(*) as n from t').get()).toEqual({ n: 12 })
      reader.close()
    } finally {
      await writer.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

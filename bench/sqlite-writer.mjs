#!/usr/bin/env node
// What the SQLite writer thread costs and saves, in-process (needs `npm run build`):
//
// - the event loop's wait for one statement inside a transaction whose answer it needs (a read),
//   run in the writer thread, against the same statement on a connection of the event loop's
//   thread (µs, median of repeats);
// - a group commit of N inserts as GroupCommit makes it: the time the event loop is held, and
//   the time until the commit is on disk, through the writer thread (each write a segment of sent
//   statements) against a connection on the event loop (each write in a savepoint).
//
//   node bench/sqlite-writer.mjs [--repeats 7] [--writes 30]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import SQLite from 'better-sqlite3'
import { root } from './lib.mjs'

const { values } = parseArgs({
  options: { repeats: { type: 'string', default: '7' }, writes: { type: 'string', default: '30' } },
})
const REPEATS = Number(values.repeats)
const WRITES = Number(values.writes)
const { SqliteWriter } = await import(join(root, 'dist/store/sqlite-writer.js'))

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const dir = mkdtempSync(join(tmpdir(), 'warden-writer-bench-'))
const row = 'x'.repeat(600)

function inThread(path) {
  const db = new SQLite(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.exec('create table if not exists t (id integer primary key, v text)')
  const insert = db.prepare('insert into t (v) values (?)')
  const savepoint = db.prepare('savepoint w')
  const release = db.prepare('release w')
  const begin = db.prepare('begin immediate')
  const commit = db.prepare('commit')
  const read = db.prepare('select id from t where id = ?')
  return {
    statements(n) {
      begin.run()
      const times = []
      for (let i = 0; i < n; i++) {
        const start = process.hrtime.bigint()
        read.get(i)
        times.push(Number(process.hrtime.bigint() - start) / 1000)
      }
      commit.run()
      return times
    },
    async group(n) {
      const start = process.hrtime.bigint()
      begin.run()
      for (let i = 0; i < n; i++) {
        savepoint.run()
        insert.run(row)
        release.run()
      }
      commit.run()
      const held = Number(process.hrtime.bigint() - start) / 1000
      return { held, durable: held }
    },
    close: () => db.close(),
  }
}

function writerThread(path) {
  const writer = new SqliteWriter(path, { walTruncateBytes: 64 * 1_048_576 })
  writer.call('run', 'create table if not exists t (id integer primary key, v text)', [])
  return {
    async statements(n) {
      await writer.request('begin')
      const times = []
      for (let i = 0; i < n; i++) {
        const start = process.hrtime.bigint()
        writer.call('first', 'select id from t where id = ?', [i])
        times.push(Number(process.hrtime.bigint() - start) / 1000)
      }
      await writer.request('commit')
      return times
    },
    async group(n) {
      const start = process.hrtime.bigint()
      writer.send('begin')
      const statements = process.hrtime.bigint()
      for (let i = 0; i < n; i++) {
        writer.send('segment')
        writer.send('send', 'insert into t (v) values (?)', [row])
        writer.send('end')
      }
      const held = Number(process.hrtime.bigint() - statements) / 1000
      await writer.request('commit')
      return { held, durable: Number(process.hrtime.bigint() - start) / 1000 }
    },
    close: () => writer.close(),
  }
}

const results = {}
for (const [name, open] of [
  ['connection on the event loop', inThread],
  ['writer thread', writerThread],
]) {
  const store = open(join(dir, `${name.replace(/\W/g, '-')}.db`))
  const statement = []
  const held = []
  const durable = []
  for (let r = 0; r < REPEATS; r++) {
    statement.push(median(await store.statements(2000)))
    const groups = []
    for (let i = 0; i < 50; i++) groups.push(await store.group(WRITES))
    held.push(median(groups.map((g) => g.held)))
    durable.push(median(groups.map((g) => g.durable)))
  }
  await store.close()
  results[name] = { statement: median(statement), held: median(held), durable: median(durable) }
}
rmSync(dir, { recursive: true, force: true })

console.log(
  `median of ${REPEATS} repeats (each: median of 2,000 statements, 50 group commits of ${WRITES} writes)\n`,
)
console.log(
  '| | one read in a transaction, event loop waits µs | group commit: event loop held µs | group commit: until on disk µs |',
)
console.log('|---|---:|---:|---:|')
for (const [name, r] of Object.entries(results))
  console.log(`| ${name} | ${r.statement.toFixed(1)} | ${r.held.toFixed(0)} | ${r.durable.toFixed(0)} |`)

#!/usr/bin/env node
// Loads a SQLite store with many records quickly (batched inserts in large transactions), so the
// benchmark can run against a full store:
//
//   node bench/seed.mjs --sqlite-file /tmp/big.db --applications 1000000 --policies 1000000
//   node bench/run.mjs --sqlite-file /tmp/big.db
//
// Records go to workspace `default` (created if missing). Every policy gets its revision 1.
import { randomBytes } from 'node:crypto'
import { statSync } from 'node:fs'
import { parseArgs } from 'node:util'
import SQLite from 'better-sqlite3'

const { values: opts } = parseArgs({
  options: {
    'sqlite-file': { type: 'string' },
    applications: { type: 'string', default: '1000000' },
    policies: { type: 'string', default: '1000000' },
  },
})
const file = opts['sqlite-file']
if (!file) throw new Error('--sqlite-file is required')
const APPS = Number(opts.applications)
const POLICIES = Number(opts.policies)

// Schema and migrations come from Warden itself.
const { openStore } = await import('../dist/store/database.js')
const { migrateToLatest } = await import('../dist/store/migrations.js')
const store = openStore({ kind: 'sqlite', path: file })
await migrateToLatest(store)
await store.close()

const db = new SQLite(file)
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL') // seeding only: the final checkpoint makes it durable
const now = Math.floor(Date.now() / 1000)
let workspace = db.prepare("select id from workspaces where name = 'default'").get()?.id
if (!workspace) {
  workspace = `seed-${randomBytes(8).toString('hex')}`
  db.prepare('insert into workspaces (id, name, created) values (?, ?, ?)').run(workspace, 'default', now)
}
const insertApp = db.prepare(
  'insert into applications (workspace_id, id, name, description, provider, model, parameters, etag, created, updated) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
)
const insertPolicy = db.prepare(
  'insert into policies (workspace_id, application_id, id, rules, target, definition, override_response, revision, etag, created, updated) values (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)',
)
const insertRevision = db.prepare(
  'insert into policy_revisions (workspace_id, application_id, policy_id, revision, rules, target, definition, override_response, created) values (?, ?, ?, 1, ?, ?, ?, ?, ?)',
)
const parameters = JSON.stringify({
  system_prompt: 'You are a helpful support agent.',
  temperature: 0.2,
  max_tokens: 1024,
  top_p: null,
  top_k: null,
})
const rules = JSON.stringify([
  { type: 'pii', expected: 'pass', value: null, threshold: null, flagged: ['email', 'phone'] },
  { type: 'factuality', expected: 'pass', value: null, threshold: 0.7, flagged: null },
  { type: 'keywords', expected: 'pass', value: null, threshold: null, flagged: ['refund guarantee'] },
])
const target = JSON.stringify(['output'])
const tag = randomBytes(3).toString('hex')
const etag = () => randomBytes(12).toString('base64url')
const BATCH = 20_000
const started = performance.now()

const appId = (i) => `seed-${tag}-${i}`
for (let from = 0; from < APPS; from += BATCH) {
  db.transaction(() => {
    for (let i = from; i < Math.min(APPS, from + BATCH); i++) {
      insertApp.run(
        workspace,
        appId(i),
        `Application ${i}`,
        'Seeded for benchmarks.',
        'openai',
        'gpt-4o',
        parameters,
        etag(),
        now,
        now,
      )
    }
  })()
}
const appsDone = performance.now()
for (let from = 0; from < POLICIES; from += BATCH) {
  db.transaction(() => {
    for (let i = from; i < Math.min(POLICIES, from + BATCH); i++) {
      const app = appId(i % APPS)
      const id = `policy-${i}`
      insertPolicy.run(
        workspace,
        app,
        id,
        rules,
        target,
        'Never leak contact details.',
        'Sorry, I cannot share that.',
        etag(),
        now,
        now,
      )
      insertRevision.run(
        workspace,
        app,
        id,
        rules,
        target,
        'Never leak contact details.',
        'Sorry, I cannot share that.',
        now,
      )
    }
  })()
}
db.pragma('wal_checkpoint(TRUNCATE)')
db.close()
const seconds = (performance.now() - started) / 1000
const bytes = statSync(file).size
const records = APPS + POLICIES
console.log(
  JSON.stringify({
    applications: APPS,
    policies: POLICIES,
    seconds: Math.round(seconds * 10) / 10,
    applicationsPerSecond: Math.round(APPS / ((appsDone - started) / 1000)),
    bytes,
    bytesPerRecord: Math.round(bytes / records),
    note: 'a policy record includes its revision row',
  }),
)

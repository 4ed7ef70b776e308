#!/usr/bin/env node
// Loads a SQLite store with many records quickly (batched inserts in large transactions), so the
// benchmark can run against a full store:
//
//   node bench/seed.mjs --sqlite-file /tmp/big.db --applications 1000000 --policies 1000000
//   node bench/run.mjs --sqlite-file /tmp/big.db
//
// With --evaluations N it also fills the evaluation log of application `log-bench` (created with
// its two policies if missing) with N entries, spread evenly over the last --evaluation-days days
// (default 30), oldest first, one in ten failing, every entry evaluating `no-pii` and every other
// one `tone`: entries shaped as Warden writes them (redacted). With --postgres URL the log is
// seeded on PostgreSQL instead (applications and policies then must be 0):
//
//   node bench/seed.mjs --sqlite-file /tmp/log.db --applications 0 --policies 0 --evaluations 10000000
//   node bench/seed.mjs --postgres postgres://…/db --applications 0 --policies 0 --evaluations 10000000
//   node bench/evaluation-log.mjs --small /tmp/small.db --large /tmp/log.db
//
// Records go to workspace `default` (created if missing), each with the JSON text the API shows
// for it, as Warden writes them. Policies are at revision 1, which lives in the policy row.
import { randomBytes, randomUUID } from 'node:crypto'
import { statSync } from 'node:fs'
import { parseArgs } from 'node:util'
import SQLite from 'better-sqlite3'

const { values: opts } = parseArgs({
  options: {
    'sqlite-file': { type: 'string' },
    postgres: { type: 'string' },
    applications: { type: 'string', default: '1000000' },
    policies: { type: 'string', default: '1000000' },
    evaluations: { type: 'string', default: '0' },
    'evaluation-days': { type: 'string', default: '30' },
  },
})
const file = opts['sqlite-file']
const APPS = Number(opts.applications)
const POLICIES = Number(opts.policies)
const EVALUATIONS = Number(opts.evaluations)
if (opts.postgres) {
  if (APPS > 0 || POLICIES > 0) throw new Error('with --postgres, pass --applications 0 --policies 0')
  const { seedEvaluationLog } = await import('./seed-evaluation-log.mjs')
  console.log(
    JSON.stringify(
      await seedEvaluationLog({ postgres: opts.postgres }, EVALUATIONS, Number(opts['evaluation-days'])),
    ),
  )
  process.exit(0)
}
if (!file) throw new Error('--sqlite-file (or --postgres) is required')

// Schema and migrations come from Warden itself.
const { openStore } = await import('../dist/store/database.js')
const { prepareStore } = await import('../dist/services/store-setup.js')
const { rowDocument } = await import('../dist/store/documents.js')
const store = openStore({ kind: 'sqlite', path: file })
await prepareStore(store)
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
  'insert into applications (workspace_id, id, name, description, provider, model, parameters, etag, created, updated, doc) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
)
const insertPolicy = db.prepare(
  'insert into policies (workspace_id, application_id, id, rules, target, definition, override_response, revision, etag, created, updated, doc) values (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)',
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
const etag = () => randomUUID().replaceAll('-', '')
const BATCH = 20_000
const started = performance.now()

const appId = (i) => `seed-${tag}-${i}`
for (let from = 0; from < APPS; from += BATCH) {
  db.transaction(() => {
    for (let i = from; i < Math.min(APPS, from + BATCH); i++) {
      const row = {
        id: appId(i),
        name: `Application ${i}`,
        description: 'Seeded for benchmarks.',
        provider: 'openai',
        model: 'gpt-4o',
        parameters,
        created: now,
        updated: now,
      }
      insertApp.run(
        workspace,
        row.id,
        row.name,
        row.description,
        row.provider,
        row.model,
        row.parameters,
        etag(),
        now,
        now,
        rowDocument('applications', row),
      )
    }
  })()
}
const appsDone = performance.now()
for (let from = 0; from < POLICIES; from += BATCH) {
  db.transaction(() => {
    for (let i = from; i < Math.min(POLICIES, from + BATCH); i++) {
      const row = {
        id: `policy-${i}`,
        application_id: appId(i % APPS),
        rules,
        target,
        definition: 'Never leak contact details.',
        override_response: 'Sorry, I cannot share that.',
        revision: 1,
        created: now,
        updated: now,
      }
      insertPolicy.run(
        workspace,
        row.application_id,
        row.id,
        rules,
        target,
        row.definition,
        row.override_response,
        etag(),
        now,
        now,
        rowDocument('policies', row),
      )
    }
  })()
}
db.pragma('wal_checkpoint(TRUNCATE)')
db.close()
const seconds = (performance.now() - started) / 1000
const bytes = statSync(file).size
const records = APPS + POLICIES
if (records > 0)
  console.log(
    JSON.stringify({
      applications: APPS,
      policies: POLICIES,
      seconds: Math.round(seconds * 10) / 10,
      applicationsPerSecond: Math.round(APPS / ((appsDone - started) / 1000)),
      bytes,
      bytesPerRecord: Math.round(bytes / records),
    }),
  )
if (EVALUATIONS > 0) {
  const { seedEvaluationLog } = await import('./seed-evaluation-log.mjs')
  console.log(
    JSON.stringify(
      await seedEvaluationLog({ sqliteFile: file }, EVALUATIONS, Number(opts['evaluation-days'])),
    ),
  )
}

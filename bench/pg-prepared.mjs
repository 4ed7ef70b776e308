#!/usr/bin/env node
// What running the store's prepared queries as named statements saves on PostgreSQL
// (src/store/pg-named-statements.ts). Each hot query of the request path runs through the
// repository function that the store runs, on two stores over the same schema, one connection
// each: the store as it is (named statements) and the same Kysely and pg without names, as
// before (every run parsed and planned). Each round runs every query on both, in alternating
// order, so that the machine's drift moves both alike; printed: the median µs per query over the
// rounds for each, and the median of the rounds' ratios with their spread. Then, per query, its
// planning and execution time for one run (EXPLAIN ANALYZE), and whether the generic plan that a
// named statement settles on is the plan that its values would get (custom), and how often
// PostgreSQL chose each for the named statements during the run (`pg_prepared_statements`).
// Written to bench/results/<time>-pg-prepared.md too.
//
//   npm run build && node bench/pg-prepared.mjs --postgres postgres://postgres@127.0.0.1:5432/test
//   node bench/pg-prepared.mjs --rounds 21 --runs 300
//
// Seeds a schema of its own (10 workspaces, 10,000 applications, 20,058 policies, 100,000 log
// entries) and drops it at the end.
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'

const { values: opts } = parseArgs({
  options: {
    postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
    dist: { type: 'string', default: new URL('../dist', import.meta.url).pathname },
    rounds: { type: 'string', default: '11' },
    runs: { type: 'string', default: '200' },
  },
})
const ROUNDS = Number(opts.rounds)
const command = `node bench/pg-prepared.mjs ${process.argv.slice(2).join(' ')}`.trim()
const RUNS = Number(opts.runs)

const load = (path) => import(pathToFileURL(resolve(opts.dist, path)).href)
const { openStore } = await load('store/database.js')
const { withOutageErrors } = await load('store/errors.js')
const { prepareStore } = await load('services/store-setup.js')
const applications = await load('store/applications.repository.js')
const policies = await load('store/policies.repository.js')
const evaluations = await load('store/evaluations.repository.js')
const keys = await load('store/keys.repository.js')
const { kyselyStatements } = await load('store/statements.js')

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

const schema = `warden_bench_prepared_${randomBytes(4).toString('hex')}`
const admin = new pg.Client({ connectionString: opts.postgres })
await admin.connect()
await admin.query(`create schema ${schema}`)

const store = openStore({ kind: 'postgres', url: opts.postgres, poolSize: 1, statementTimeoutMs: 0, schema })
// The same store without names: Kysely's PostgresDialect over a plain pool, as before. Its
// client records what it sends, for the EXPLAIN below.
const sent = new Map()
let recording = null
const pool = new pg.Pool({
  connectionString: opts.postgres,
  max: 1,
  options: `-c search_path=${schema}`,
  types: {
    getTypeParser: (oid, format) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format)),
  },
})
pool.on('connect', (client) => {
  const query = client.query.bind(client)
  client.query = (text, values) => {
    if (recording && typeof text === 'string' && !sent.has(recording)) sent.set(recording, { text, values })
    return query(text, values)
  }
})
const unnamed = new Kysely({ dialect: withOutageErrors(new PostgresDialect({ pool })) })

try {
  await prepareStore(store)
  await admin.query(`set search_path = ${schema}`)
  await admin.query(`
    insert into workspaces select 'ws-' || i, 'workspace ' || i, 0 from generate_series(0, 9) i;
    insert into api_keys (id, workspace_id, name, key_hash, prefix, scopes, created)
      select 'key-' || i, 'ws-' || (i % 10), null, md5(i::text), 'wk_', '["admin"]', 0
      from generate_series(0, 999) i;
    insert into applications (workspace_id, id, name, description, etag, created, updated, doc)
      select 'ws-' || (i % 10), 'app-' || (i / 10), 'App ' || i, '', 'e', 0, 0, repeat('a', 300)
      from generate_series(0, 9999) i;
    insert into policies (workspace_id, application_id, id, rules, target, revision, etag, created, updated, doc)
      select 'ws-' || (a % 10), 'app-' || (a / 10), 'policy-' || p, '[]', '["input"]', 1, 'e', 0, 0,
        repeat('p', 1000)
      from generate_series(0, 9999) a, generate_series(0, 1) p;
    insert into policies (workspace_id, application_id, id, rules, target, revision, etag, created, updated, doc)
      select 'ws-0', 'app-0', 'policy-' || p, '[]', '["input"]', 1, 'e', 0, 0, repeat('p', 1000)
      from generate_series(2, 59) p;
    insert into evaluations (id, app_seq, created, verdict, doc)
      select 'ev-' || i, (select seq from applications where workspace_id = 'ws-0' and id = 'app-0'),
        1700000000 + i, case when i % 10 = 0 then 'fail' else 'pass' end, repeat('e', 500)
      from generate_series(1, 100000) i;
    insert into evaluation_policies select seq, 'policy-0', app_seq, created, verdict from evaluations;
    analyze;
  `)
  const appSeq = (await evaluations.findApplicationSeq(store.statements, 'ws-0', 'app-0')) ?? 0
  let logged = 0
  const entry = () => ({
    appSeq,
    id: `bench-${logged++}`,
    created: 1800000000,
    verdict: 'pass',
    policyIds: ['policy-0', 'policy-1'],
    doc: '{}',
  })

  /** Each query as the request path runs it: on a store's statements, or as a write of one. */
  const queries = [
    [
      'API key by hash',
      (s) => keys.findApiKeyByHash(s.statements, createHash('md5').update('5').digest('hex')),
    ],
    ['application document', (s) => applications.findApplicationDocument(s.statements, 'ws-0', 'app-500')],
    ['application row', (s) => applications.findApplication(s.statements, 'ws-0', 'app-500')],
    ['application exists', (s) => applications.applicationExists(s.statements, 'ws-0', 'app-500')],
    ['list of 50 applications', (s) => applications.listApplicationDocuments(s.statements, 'ws-0', 0, 50)],
    ['policy document', (s) => policies.findPolicyDocument(s.statements, 'ws-0', 'app-0', 'policy-30')],
    ['policy row', (s) => policies.findPolicy(s.statements, 'ws-0', 'app-0', 'policy-30')],
    ['list of 50 policies', (s) => policies.listPolicyDocuments(s.statements, 'ws-0', 'app-0', 0, 50)],
    [
      'evaluated application (2 policies)',
      (s) => evaluations.findEvaluatedApplication(s.statements, 'ws-3', 'app-7'),
    ],
    ['application seq', (s) => evaluations.findApplicationSeq(s.statements, 'ws-0', 'app-0')],
    ['log entry by id', (s) => evaluations.findEvaluationDocument(s.statements, appSeq, 'ev-50000')],
  ]
  const write = [
    'log an evaluation (2 policies, a transaction)',
    (s) =>
      s.db
        .transaction()
        .execute((trx) => evaluations.insertEvaluation(kyselyStatements(trx, 'postgres'), entry())),
  ]
  const modes = { unnamed: { db: unnamed, statements: kyselyStatements(unnamed, 'postgres') }, named: store }

  /** µs per run of `query` on `store`, over RUNS runs in a row. */
  const time = async (store, query) => {
    const start = process.hrtime.bigint()
    for (let i = 0; i < RUNS; i++) await query(store)
    return Number(process.hrtime.bigint() - start) / 1000 / RUNS
  }
  const cases = [...queries, write]
  // Warm-up: the named statements prepared and past the five runs that choose their plan.
  for (const [label, query] of cases) {
    recording = label
    for (let i = 0; i < 10; i++) for (const mode of Object.values(modes)) await query(mode)
    recording = null
  }
  const results = new Map(cases.map(([label]) => [label, { unnamed: [], named: [], ratios: [] }]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const [label, query] of cases) {
      const order = round % 2 === 0 ? ['unnamed', 'named'] : ['named', 'unnamed']
      const r = results.get(label)
      const t = {}
      for (const mode of order) t[mode] = await time(modes[mode], query)
      r.unnamed.push(t.unnamed)
      r.named.push(t.named)
      r.ratios.push(t.named / t.unnamed)
    }
  }

  const fmt = (x, digits = 0) => x.toFixed(digits)
  const out = [`# Named statements on PostgreSQL, ${new Date().toISOString()}`, '', `Command: \`${command}\``]
  const print = (line) => out.push(line)
  print(
    `\n${ROUNDS} rounds × ${RUNS} runs a query and mode, one connection each (PostgreSQL ${(await admin.query('show server_version')).rows[0].server_version})\n`,
  )
  print('| query | unnamed µs | named µs | named / unnamed (spread) |')
  print('|---|---:|---:|---:|')
  for (const [label, r] of results) {
    const spread = `${fmt(Math.min(...r.ratios), 2)}–${fmt(Math.max(...r.ratios), 2)}`
    print(
      `| ${label} | ${fmt(median(r.unnamed))} | ${fmt(median(r.named))} | ${fmt(median(r.ratios), 2)} (${spread}) |`,
    )
  }

  // Plans: each query prepared by hand, explained once with a custom plan and once with the
  // generic plan, with the values the benchmark ran it with.
  const shape = (plan) => {
    const node = `${plan['Node Type']}${plan['Index Name'] ? ` ${plan['Index Name']}` : ''}`
    const below = (plan.Plans ?? []).map(shape)
    return below.length ? `${node} (${below.join(', ')})` : node
  }
  const explain = async (mode, literals) => {
    await admin.query(`set plan_cache_mode = ${mode}`)
    const { rows } = await admin.query(`explain (analyze, format json) execute bench_q(${literals})`)
    const [result] = rows[0]['QUERY PLAN']
    return {
      shape: shape(result.Plan),
      planning: result['Planning Time'],
      execution: result['Execution Time'],
    }
  }
  print('\n| query | planning ms (custom) | execution ms (custom / generic) | generic plan = custom plan |')
  print('|---|---:|---:|---|')
  for (const [label] of queries) {
    const { text, values } = sent.get(label)
    await admin.query('deallocate all')
    await admin.query(`prepare bench_q as ${text}`)
    const literals = values.map((v) => admin.escapeLiteral(String(v))).join(', ')
    // The best of five: the first run of each reads cold caches.
    const best = async (mode) => {
      const runs = []
      for (let i = 0; i < 5; i++) runs.push(await explain(mode, literals))
      return runs.reduce((a, b) => (a.planning + a.execution <= b.planning + b.execution ? a : b))
    }
    const custom = await best('force_custom_plan')
    const generic = await best('force_generic_plan')
    const same = custom.shape === generic.shape ? 'yes' : `no: ${generic.shape} against ${custom.shape}`
    print(
      `| ${label} | ${fmt(custom.planning, 3)} | ${fmt(custom.execution, 3)} / ${fmt(generic.execution, 3)} | ${same} |`,
    )
  }
  await admin.query('reset plan_cache_mode')
  const { rows } =
    await sql`select name, generic_plans, custom_plans from pg_prepared_statements order by name`.execute(
      store.db,
    )
  print('\nThe named statements of the store’s connection, and the plans PostgreSQL chose for them:\n')
  for (const row of rows) print(`- ${row.name}: ${row.generic_plans} generic, ${row.custom_plans} custom`)
  const text = `${out.join('\n')}\n`
  console.log(`\n${text}`)
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  const folder = new URL('results/', import.meta.url).pathname
  mkdirSync(folder, { recursive: true })
  writeFileSync(join(folder, `${stamp}-pg-prepared.md`), text)
  console.log(`written: bench/results/${stamp}-pg-prepared.md`)
} finally {
  await store.close()
  await unnamed.destroy()
  await admin.query(`drop schema ${schema} cascade`)
  await admin.end()
}

// Fills the evaluation log of application `log-bench` with many entries quickly, for
// bench/evaluation-log.mjs; called by bench/seed.mjs (--evaluations N). The application and its
// two policies are created through Warden's own services; the entries are written with
// multi-row inserts in large transactions, durability relaxed for the seeding only (SQLite
// synchronous=OFF with a checkpoint at the end; PostgreSQL synchronous_commit=off), then the
// tables are analysed on PostgreSQL, as autovacuum would do after such a load.
import { statSync } from 'node:fs'
import SQLite from 'better-sqlite3'
import pg from 'pg'

/** Rows per INSERT statement, and per transaction. */
const ROWS = 200
const TRANSACTION = 100_000

const hex = (n, width) => n.toString(16).padStart(width, '0')

/** A UUIDv7 for time `ms`, unique by `n` (no randomness needed to seed). */
const uuid7 = (ms, n) => {
  const t = hex(ms, 12)
  const c = hex(n, 18)
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${c.slice(0, 3)}-8${c.slice(3, 6)}-${c.slice(6, 18)}`
}

const rule = (index, type, status, findings) =>
  `{"index":${index},"type":"${type}","expected":"pass","status":"${status}","satisfied":${status === 'pass'},"score":null,"threshold":null,"method":"detector","reason":null,"findings":[${findings}]}`
const CARD_FINDING =
  '{"kind":"credit_card","source":"messages","index":1,"start":11,"end":30,"text":"[CREDIT_CARD]"}'

/** An entry as Warden writes it with EVALUATION_LOG_CONTENT=redacted: about 1 KB. */
function entryDoc(id, created, fail, withTone, n) {
  const noPii = `{"id":"no-pii","revision":1,"mode":"enforce","on_error":"fail_closed","draft":false,"verdict":"${fail ? 'fail' : 'pass'}","rules":[${rule(0, 'pii', fail ? 'fail' : 'pass', fail ? CARD_FINDING : '')}]}`
  const tone = `{"id":"tone","revision":1,"mode":"monitor","on_error":"fail_closed","draft":false,"verdict":"pass","rules":[${rule(0, 'keywords', 'pass', '')}]}`
  const user = fail
    ? 'My card is [CREDIT_CARD], can I get a refund for order 1042?'
    : `Where is my order ${n}? It was due last week.`
  return `{"id":"${id}","application_id":"log-bench","created":${created},"verdict":"${fail ? 'fail' : 'pass'}","action":"${fail ? 'override' : 'allow'}","override_response":${fail ? '"Sorry, I cannot help with that here."' : 'null'},"latency_ms":0.41,"policies":[${withTone ? `${noPii},${tone}` : noPii}],"key_id":"01a20438-b199-7162-8485-7ca1faabb0f3","request_id":"${uuid7(created * 1000, n + 1)}","source":"api","content":"redacted","messages":[{"role":"system","content":"You are a helpful support agent for an online shop. Answer briefly."},{"role":"user","content":"${user}"}],"context":[]}`
}

/** Creates workspace `default`, application `log-bench` and its policies if missing; returns the application's seq. */
async function prepare(storeConfig) {
  const { openStore } = await import('../dist/store/database.js')
  const { prepareStore } = await import('../dist/services/store-setup.js')
  const { createServices } = await import('../dist/services/index.js')
  const { loadConfig } = await import('../dist/config.js')
  const store = openStore(storeConfig)
  try {
    await prepareStore(store)
    const services = createServices({ store, config: loadConfig({}) })
    const workspace =
      (await services.operator.findWorkspace('default')) ??
      (await services.operator.createWorkspace('default'))
    const ignoreConflict = (error) => {
      if (error?.code !== 'conflict') throw error
    }
    await services.applications
      .create(workspace.id, { id: 'log-bench', name: 'Log bench', description: 'A seeded evaluation log.' })
      .catch(ignoreConflict)
    await services.policies
      .create(workspace.id, 'log-bench', {
        id: 'no-pii',
        rules: [{ type: 'pii' }],
        target: ['input', 'output'],
      })
      .catch(ignoreConflict)
    await services.policies
      .create(workspace.id, 'log-bench', {
        id: 'tone',
        rules: [{ type: 'keywords', flagged: ['refund guarantee'] }],
        target: ['output'],
        mode: 'monitor',
      })
      .catch(ignoreConflict)
    const app = await store.db
      .selectFrom('applications')
      .select('seq')
      .where('workspace_id', '=', workspace.id)
      .where('id', '=', 'log-bench')
      .executeTakeFirstOrThrow()
    const last = await store.db
      .selectFrom('evaluations')
      .select((eb) => eb.fn.max('seq').as('seq'))
      .executeTakeFirst()
    return { appSeq: Number(app.seq), firstSeq: Number(last?.seq ?? 0) + 1 }
  } finally {
    await store.close()
  }
}

/** Every row of entry `i` of `count`, spread over `days` days ending now. */
function* rows(count, days, appSeq, firstSeq) {
  const now = Math.floor(Date.now() / 1000)
  const span = days * 86_400
  for (let i = 0; i < count; i++) {
    const created = now - span + Math.floor((i * span) / count)
    const fail = i % 10 === 0
    const withTone = i % 2 === 0
    const seq = firstSeq + i
    const id = uuid7(created * 1000 + (i % 1000), i)
    yield {
      seq,
      id,
      created,
      verdict: fail ? 'fail' : 'pass',
      doc: entryDoc(id, created, fail, withTone, i),
      withTone,
      appSeq,
    }
  }
}

async function seedSqlite(file, count, days) {
  const { appSeq, firstSeq } = await prepare({ kind: 'sqlite', path: file })
  const db = new SQLite(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = OFF') // seeding only: the final checkpoint makes it durable
  db.pragma('cache_size = -1000000')
  const values = (n, width) => Array.from({ length: n }, () => `(${'?,'.repeat(width - 1)}?)`).join(',')
  const insertEntries = (n) =>
    db.prepare(`insert into evaluations (seq, app_seq, id, created, verdict, doc) values ${values(n, 6)}`)
  const insertPolicies = (n) =>
    db.prepare(
      `insert into evaluation_policies (seq, policy_id, app_seq, created, verdict) values ${values(n, 5)}`,
    )
  const fullEntries = insertEntries(ROWS)
  const statements = new Map()
  const policiesOf = (n) => {
    let statement = statements.get(n)
    if (!statement) {
      statement = insertPolicies(n)
      statements.set(n, statement)
    }
    return statement
  }
  const started = performance.now()
  let entries = []
  let policies = []
  const flushRows = () => {
    if (entries.length > 0) {
      const flat = entries.flatMap((r) => [r.seq, r.appSeq, r.id, r.created, r.verdict, r.doc])
      ;(entries.length === ROWS ? fullEntries : insertEntries(entries.length)).run(flat)
    }
    for (let i = 0; i < policies.length; i += ROWS) {
      const chunk = policies.slice(i, i + ROWS)
      policiesOf(chunk.length).run(chunk.flat())
    }
    entries = []
    policies = []
  }
  let inTransaction = 0
  db.exec('begin')
  for (const row of rows(count, days, appSeq, firstSeq)) {
    entries.push(row)
    policies.push([row.seq, 'no-pii', row.appSeq, row.created, row.verdict])
    if (row.withTone) policies.push([row.seq, 'tone', row.appSeq, row.created, row.verdict])
    if (entries.length === ROWS) flushRows()
    if (++inTransaction === TRANSACTION) {
      db.exec('commit')
      db.exec('begin')
      inTransaction = 0
    }
  }
  flushRows()
  db.exec('commit')
  // AUTOINCREMENT continues after the seeded sequence numbers.
  db.prepare(
    "update sqlite_sequence set seq = (select max(seq) from evaluations) where name = 'evaluations'",
  ).run()
  db.pragma('wal_checkpoint(TRUNCATE)')
  db.close()
  const seconds = (performance.now() - started) / 1000
  const bytes = statSync(file).size
  return {
    evaluations: count,
    seconds: Math.round(seconds * 10) / 10,
    perSecond: Math.round(count / seconds),
    bytes,
  }
}

async function seedPostgres(url, count, days) {
  const { parseDatabaseUrl } = await import('../dist/config.js')
  const storeConfig = parseDatabaseUrl(url)
  const schema = new URL(url).searchParams.get('options')?.match(/search_path=(\w+)/)?.[1]
  const { appSeq, firstSeq } = await prepare(schema ? { ...storeConfig, schema } : storeConfig)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query('set synchronous_commit = off')
  const started = performance.now()
  const BATCH = 5000
  let entries = []
  const flush = async () => {
    if (entries.length === 0) return
    await client.query(
      `insert into evaluations (seq, app_seq, id, created, verdict, doc) overriding system value
       select * from unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[], $5::text[], $6::text[])`,
      [
        entries.map((r) => r.seq),
        entries.map((r) => r.appSeq),
        entries.map((r) => r.id),
        entries.map((r) => r.created),
        entries.map((r) => r.verdict),
        entries.map((r) => r.doc),
      ],
    )
    const policies = entries.flatMap((r) =>
      r.withTone
        ? [
            [r.seq, 'no-pii', r.appSeq, r.created, r.verdict],
            [r.seq, 'tone', r.appSeq, r.created, r.verdict],
          ]
        : [[r.seq, 'no-pii', r.appSeq, r.created, r.verdict]],
    )
    await client.query(
      `insert into evaluation_policies (seq, policy_id, app_seq, created, verdict)
       select * from unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::text[])`,
      [
        policies.map((p) => p[0]),
        policies.map((p) => p[1]),
        policies.map((p) => p[2]),
        policies.map((p) => p[3]),
        policies.map((p) => p[4]),
      ],
    )
    entries = []
  }
  let inTransaction = 0
  await client.query('begin')
  for (const row of rows(count, days, appSeq, firstSeq)) {
    entries.push(row)
    if (entries.length === BATCH) await flush()
    if (++inTransaction === TRANSACTION) {
      await client.query('commit')
      await client.query('begin')
      inTransaction = 0
    }
  }
  await flush()
  await client.query('commit')
  await client.query(
    "select setval(pg_get_serial_sequence('evaluations', 'seq'), (select max(seq) from evaluations))",
  )
  await client.query('analyze evaluations')
  await client.query('analyze evaluation_policies')
  const size = await client.query(
    "select pg_total_relation_size('evaluations') + pg_total_relation_size('evaluation_policies') as bytes",
  )
  await client.end()
  const seconds = (performance.now() - started) / 1000
  return {
    evaluations: count,
    seconds: Math.round(seconds * 10) / 10,
    perSecond: Math.round(count / seconds),
    bytes: Number(size.rows[0].bytes),
  }
}

/** Seeds `count` entries into the store named by `target` ({sqliteFile} or {postgres}). */
export function seedEvaluationLog(target, count, days) {
  return target.postgres
    ? seedPostgres(target.postgres, count, days)
    : seedSqlite(target.sqliteFile, count, days)
}

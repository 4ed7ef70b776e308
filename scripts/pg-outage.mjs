#!/usr/bin/env node
// Stops the local PostgreSQL under load and starts it again, to prove that Warden answers 503
// problem+json with Retry-After within a bounded time while the database is down, that /readyz
// says so, and that it recovers without a restart. It really stops the database server, so run
// it only on a machine whose PostgreSQL nothing else needs at that moment (CI runs it last).
//
//   node scripts/pg-outage.mjs            (needs root, pg_ctlcluster, and `npm run build` first)
//
// Environment: OUTAGE_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test).
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { createServer } from 'node:net'
import pg from 'pg'

const baseUrl = process.env.OUTAGE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const version = readdirSync('/etc/postgresql')[0]
const ADMIN = `outage-admin-${randomBytes(12).toString('hex')}`
const BOUND_MS = 5000 // the longest any answer may take while the database is down
const OUTAGE_MS = 6000
const WORKERS = 8

const cluster = (action) =>
  execFileSync(
    'pg_ctlcluster',
    ['--skip-systemctl-redirect', version, 'main', action, ...(action === 'stop' ? ['-m', 'fast'] : [])],
    {
      stdio: 'inherit',
    },
  )
// Whatever happens, never leave the machine's database stopped.
let databaseStopped = false
process.on('exit', () => {
  if (databaseStopped) cluster('start')
})
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function admin(sql) {
  const client = new pg.Client({ connectionString: baseUrl })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

const schema = `warden_outage_${randomBytes(4).toString('hex')}`
await admin(`create schema ${schema}`)
const url = new URL(baseUrl)
url.searchParams.set('options', `-c search_path=${schema}`)

// A free port, chosen here so that the server can log at level error only.
const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address()
    probe.close(() => resolve(port))
  })
})
const server = spawn(process.execPath, ['bin/warden.js', 'serve'], {
  env: {
    ...process.env,
    DATABASE_URL: url.toString(),
    PORT: String(port),
    WARDEN_ADMIN_KEY: ADMIN,
    LOG_LEVEL: 'error',
    RATE_LIMIT_PER_MINUTE: '0',
    // No metrics listener: nothing else may hold its port for this run to start.
    METRICS_PORT: '0',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
})
let crashed = null
server.on('exit', (code, signal) => {
  crashed = { code, signal }
})
for (let waited = 0; ; waited += 100) {
  if (waited > 20_000 || crashed) throw new Error('the server did not start')
  const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
    (r) => r.ok,
    () => false,
  )
  if (up) break
  await sleep(100)
}
const base = `http://127.0.0.1:${port}`
const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }
await fetch(`${base}/v1/applications`, {
  method: 'POST',
  headers,
  body: JSON.stringify({ id: 'probe', name: 'Probe', description: '' }),
})

/** phase → list of { status, ms, problem, retryAfter } */
const results = { before: [], outage: [], after: [] }
let phase = 'before'
let running = true
let n = 0
async function worker(w) {
  while (running) {
    const started = Date.now()
    const write = n++ % 2 === 0
    const at = phase
    try {
      const res = await fetch(write ? `${base}/v1/applications` : `${base}/v1/applications/probe`, {
        method: write ? 'POST' : 'GET',
        headers,
        body: write ? JSON.stringify({ name: `w${w}`, description: '' }) : undefined,
        signal: AbortSignal.timeout(30_000),
      })
      const text = await res.text()
      results[at].push({
        status: res.status,
        ms: Date.now() - started,
        problem: res.headers.get('content-type')?.startsWith('application/problem+json') ?? false,
        retryAfter: res.headers.get('retry-after'),
        code: res.status >= 400 ? JSON.parse(text).code : null,
      })
    } catch (error) {
      results[at].push({ status: 0, ms: Date.now() - started, error: String(error) })
    }
    if (at !== 'before' && phase === at) await sleep(20)
  }
}
const workers = Array.from({ length: WORKERS }, (_, w) => worker(w))

await sleep(1500)
console.log('stopping PostgreSQL')
phase = 'outage'
const stoppedAt = Date.now()
databaseStopped = true
cluster('stop')
await sleep(500)
const readyDuring = (await fetch(`${base}/readyz`)).status
await sleep(OUTAGE_MS)
console.log('starting PostgreSQL')
cluster('start')
databaseStopped = false
const restartedAt = Date.now()
phase = 'after'
let recoveredAt = null
while (Date.now() - restartedAt < 30_000) {
  const res = await fetch(`${base}/v1/applications/probe`, { headers })
  if (res.status === 200) {
    recoveredAt = Date.now()
    break
  }
  await sleep(100)
}
await sleep(1500)
running = false
await Promise.all(workers)
const readyAfter = (await fetch(`${base}/readyz`)).status

server.kill('SIGTERM')
const exit = await new Promise((resolve) =>
  crashed ? resolve(crashed) : server.on('exit', (code, signal) => resolve({ code, signal })),
)
await admin(`drop schema ${schema} cascade`)

const summary = (list) => {
  const byStatus = {}
  for (const r of list) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1
  const ms = list.map((r) => r.ms).sort((a, b) => a - b)
  return { requests: list.length, byStatus, maxMs: ms[ms.length - 1] ?? 0 }
}
const outage = results.outage
const failures = []
const bad503 = outage.filter(
  (r) => r.status >= 500 && !(r.status === 503 && r.problem && r.retryAfter && r.code === 'unavailable'),
)
if (bad503.length)
  failures.push(`${bad503.length} 5xx answers during the outage were not 503 problem+json with Retry-After`)
if (outage.some((r) => r.status === 0)) failures.push('some requests got no answer during the outage')
if (outage.filter((r) => r.status === 503).length === 0) failures.push('no request saw the outage')
const slow = outage.filter((r) => r.ms > BOUND_MS)
if (slow.length) failures.push(`${slow.length} answers took longer than ${BOUND_MS} ms during the outage`)
if (readyDuring !== 503) failures.push(`/readyz answered ${readyDuring} during the outage`)
if (readyAfter !== 200) failures.push(`/readyz answered ${readyAfter} after recovery`)
if (!recoveredAt) failures.push('Warden did not recover within 30 s of the database returning')
if (results.after.slice(-WORKERS * 3).some((r) => r.status >= 500))
  failures.push('errors continued after recovery')
if (exit.code !== 0)
  failures.push(`the server exited with ${JSON.stringify(exit)} (crashed: ${JSON.stringify(crashed)})`)

console.log(
  JSON.stringify(
    {
      before: summary(results.before),
      outage: { ...summary(outage), outageMs: restartedAt - stoppedAt, readyz: readyDuring },
      after: {
        ...summary(results.after),
        recoveredMsAfterRestart: recoveredAt ? recoveredAt - restartedAt : null,
        readyz: readyAfter,
      },
      serverExit: exit,
    },
    null,
    2,
  ),
)
if (failures.length) {
  console.log(`FAIL\n- ${failures.join('\n- ')}`)
  process.exit(1)
}
console.log(
  'PASS: 503 problem+json with Retry-After during the outage, bounded latency, recovery without a restart',
)

#!/usr/bin/env node
// Warden's benchmark: every case against the bare node:http baseline measured in the same run.
//
//   npm run bench                                   SQLite (and PostgreSQL with --postgres URL)
//   node bench/run.mjs --rounds 5 --duration 10 --connections 64 --postgres postgres://…/test
//   node bench/run.mjs --sqlite-file /path/big.db   an existing (for example seeded) store
//   node bench/run.mjs --env LOG_LEVEL=warn         Warden with extra environment: what a feature costs
//
// Where taskset exists, the load generator runs on core 0 and the server on core 1.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { APP_BODY } from './bodies.mjs'
import {
  benchArgs,
  cpuSeconds,
  envPairs,
  hasTaskset,
  load as loadOn,
  median,
  root,
  runPinned,
  START_FLAGS,
  startProcess,
  steady as steadyLoad,
} from './lib.mjs'

const { opts, ROUNDS, DURATION, CONNECTIONS } = benchArgs(
  {},
  {
    postgres: { type: 'string' },
    'sqlite-file': { type: 'string' },
    label: { type: 'string', default: '' },
    // Extra environment for Warden (KEY=VALUE, repeatable), to measure what a feature costs; a run
    // with any is not the budget's configuration and says so.
    env: { type: 'string', multiple: true, default: [] },
  },
)
const EXTRA_ENV = envPairs(opts.env)

/** Peak resident memory of a process, sampled while `during` runs (VmRSS, MB). */
async function sampleRss(pid, during) {
  let peak = 0
  const read = () => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
      peak = Math.max(peak, kb / 1024)
    } catch {}
  }
  read()
  const timer = setInterval(read, 50)
  try {
    const result = await during()
    return { result, peakRssMb: peak }
  } finally {
    clearInterval(timer)
    read()
  }
}

const load = ({ duration = DURATION, ...rest }) => loadOn({ connections: CONNECTIONS, duration, ...rest })

let policySeq = 0
const run = randomBytes(3).toString('hex')
/** A ≈1 KB policy with three rules and a fresh id per request. */
const policyBody = () =>
  JSON.stringify({
    id: `p-${run}-${++policySeq}`,
    rules: [
      { type: 'pii', flagged: ['email', 'phone', 'credit_card', 'iban'] },
      { type: 'regex', value: '\\b(?:password|secret|api[_-]?key)\\s*[:=]\\s*\\S+' },
      { type: 'factuality', threshold: 0.7 },
    ],
    target: ['input', 'output'],
    definition:
      'Replies must never reveal customer contact details, payment data or credentials, and must stay grounded in the retrieved order documents. '.repeat(
        3,
      ),
    override_response: 'Sorry, I cannot share that. A human agent will follow up on your request shortly.',
  })

/** One measured round of a case: autocannon's figures, server CPU per request, peak RSS. */
async function round(port, pid, c) {
  const cpuBefore = cpuSeconds(pid)
  const { result, peakRssMb } = await sampleRss(pid, () => load({ port, requests: c.requests() }))
  const cpuUs = ((cpuSeconds(pid) - cpuBefore) * 1e6) / result.requests.total
  return {
    cpuUs,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    peakRssMb,
  }
}

/** One second of load before a case is measured, so that no round measures a cold JIT. */
const warmUp = (port, c) => load({ port, requests: c.requests(), duration: 1 })

/**
 * The baseline server runs for the whole benchmark, and every measured round of every case comes
 * right after a baseline round of its own. A case's ratio is the median of its rounds' ratios to
 * those adjacent baseline rounds: this machine's speed drifts by tens of percent within minutes,
 * and a ratio of figures measured minutes apart would measure the drift.
 */
const baseline = {
  server: undefined,
  rounds: [],
  case: {
    requests: () => [
      { method: 'POST', path: '/echo', headers: { 'content-type': 'application/json' }, body: APP_BODY },
    ],
  },
}

async function measureCase(port, pid, c) {
  await warmUp(port, c)
  const rounds = []
  for (let i = 0; i < ROUNDS; i++) {
    const base = await round(baseline.server.port, baseline.server.proc.pid, baseline.case)
    baseline.rounds.push(base)
    const measured = await round(port, pid, c)
    rounds.push({ ...measured, baselineRps: base.rps, ratio: measured.rps / base.rps })
  }
  return rounds
}

function summarise(name, rounds) {
  const rps = median(rounds.map((r) => r.rps))
  const paired = rounds.every((r) => r.ratio !== undefined)
  return {
    case: name,
    rps,
    rpsMin: Math.min(...rounds.map((r) => r.rps)),
    rpsMax: Math.max(...rounds.map((r) => r.rps)),
    cpuUs: median(rounds.map((r) => r.cpuUs)),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    errors: rounds.reduce((a, r) => a + r.errors, 0),
    peakRssMb: Math.max(...rounds.map((r) => r.peakRssMb)),
    ratio: paired ? median(rounds.map((r) => r.ratio)) : 1,
    ratioMin: paired ? Math.min(...rounds.map((r) => r.ratio)) : 1,
    ratioMax: paired ? Math.max(...rounds.map((r) => r.ratio)) : 1,
    baselineRps: paired ? median(rounds.map((r) => r.baselineRps)) : rps,
  }
}

async function benchStore(label, env, budget) {
  const adminKey = `bench-admin-${randomBytes(16).toString('hex')}`
  // Started exactly as `npm start` starts it (package.json), V8 flags included.
  const server = await startProcess([...START_FLAGS, 'bin/warden.js', 'serve'], {
    ...env,
    WARDEN_ADMIN_KEY: adminKey,
    // Rate limiting stays on, with a limit no run can reach.
    RATE_LIMIT_PER_MINUTE: '100000000',
    ...EXTRA_ENV,
  })
  const auth = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }
  const base = `http://127.0.0.1:${server.port}`
  await fetch(`${base}/v1/applications`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ id: `bench-${run}`, name: 'Bench', description: '' }),
  })
  for (let i = 0; i < 50; i++)
    await fetch(`${base}/v1/applications`, { method: 'POST', headers: auth, body: APP_BODY })

  const cases = [
    {
      name: 'create application',
      requests: () => [{ method: 'POST', path: '/v1/applications', headers: auth, body: APP_BODY }],
    },
    {
      name: 'create policy (1 KB, 3 rules)',
      requests: () => [
        {
          method: 'POST',
          path: `/v1/applications/bench-${run}/policies`,
          headers: auth,
          setupRequest: (req) => ({ ...req, body: policyBody() }),
        },
      ],
    },
    {
      name: 'get one',
      requests: () => [{ method: 'GET', path: `/v1/applications/bench-${run}`, headers: auth }],
    },
    {
      name: 'list 50',
      requests: () => [{ method: 'GET', path: '/v1/applications?limit=50', headers: auth }],
    },
  ]
  const rows = []
  for (const c of cases) rows.push(summarise(c.name, await measureCase(server.port, server.proc.pid, c)))

  // Latency under a steady load at half the measured peak rate of each write and read, and the
  // baseline's under the same offered load right before: the machine's own tail latency.
  const steady = []
  for (const c of [cases[0], cases[2]]) {
    const rate = Math.round(rows.find((r) => r.case === c.name).rps / 2)
    // Evenly spaced, open loop (lib.mjs `steady`): autocannon's rate would send each second's
    // quota back to back and measure a saturated server for half of each second.
    const alone = await steadyLoad({
      port: baseline.server.port,
      request: baseline.case.requests()[0],
      rate,
      duration: DURATION,
    })
    const { result } = await sampleRss(server.proc.pid, () =>
      steadyLoad({ port: server.port, request: c.requests()[0], rate, duration: DURATION }),
    )
    steady.push({
      case: c.name,
      rate,
      p50: result.p50,
      p99: result.p99,
      errors: result.errors,
      baselineP50: alone.p50,
      baselineP99: alone.p99,
    })
  }
  server.proc.kill('SIGTERM')
  await new Promise((resolve) => server.proc.on('exit', resolve))

  // Start-up on the now populated store.
  const startups = []
  for (let i = 0; i < 3; i++) {
    const again = await startProcess([...START_FLAGS, 'bin/warden.js', 'serve'], {
      ...env,
      WARDEN_ADMIN_KEY: adminKey,
    })
    startups.push(again.startMs)
    again.proc.kill('SIGTERM')
    await new Promise((resolve) => again.proc.on('exit', resolve))
  }
  return { label, rows, steady, startupMs: median(startups), budget }
}

/**
 * The store's share of the limit: bench/floor-server.mjs does the durable insert of a create and
 * the reads of a get and of a list page as Warden does on SQLite, with no validation, auth,
 * logging or rate limit; once behind node:http and once behind a bare Fastify instance.
 */
async function measureFloor(http) {
  const server = await startProcess(
    ['bench/floor-server.mjs'],
    { FLOOR_HTTP: http },
    {
      readyPath: '/v1/applications/none',
    },
  )
  const json = { 'content-type': 'application/json' }
  const post = (body) =>
    fetch(`http://127.0.0.1:${server.port}/v1/applications`, { method: 'POST', headers: json, body })
  await post(JSON.stringify({ id: 'bench', name: 'Bench', description: '' }))
  for (let i = 0; i < 50; i++) await post(APP_BODY)
  const cases = [
    {
      name: `floor (${http}): durable insert`,
      requests: () => [{ method: 'POST', path: '/v1/applications', headers: json, body: APP_BODY }],
    },
    {
      name: `floor (${http}): read one`,
      requests: () => [{ method: 'GET', path: '/v1/applications/bench' }],
    },
    { name: `floor (${http}): page of 50`, requests: () => [{ method: 'GET', path: '/v1/applications' }] },
  ]
  const rows = []
  for (const c of cases) rows.push(summarise(c.name, await measureCase(server.port, server.proc.pid, c)))
  server.proc.kill('SIGTERM')
  await new Promise((resolve) => server.proc.on('exit', resolve))
  return rows
}

const fmt = (n, d = 0) => n.toFixed(d)

const HEADER = [
  '| case | req/s (median) | spread (min–max) | × baseline (median, spread) | p50 ms | p99 ms | errors | peak RSS MB | server CPU µs/req |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
]

const row = (r) =>
  `| ${r.case} | ${fmt(r.rps)} | ${fmt(r.rpsMin)}–${fmt(r.rpsMax)} | ${fmt(r.ratio, 2)} (${fmt(r.ratioMin, 2)}–${fmt(r.ratioMax, 2)}) | ${r.p50} | ${r.p99} | ${r.errors} | ${fmt(r.peakRssMb)} | ${fmt(r.cpuUs)} |`

function table(result) {
  const lines = [...HEADER]
  for (const r of result.rows) lines.push(row(r))
  lines.push(
    '',
    '| steady load at half the peak rate | req/s offered | p50 ms | p99 ms | errors | baseline at the same rate: p50 / p99 ms |',
    '|---|---:|---:|---:|---:|---:|',
  )
  for (const s of result.steady)
    lines.push(
      `| ${s.case} | ${s.rate} | ${s.p50} | ${s.p99} | ${s.errors} | ${s.baselineP50} / ${s.baselineP99} |`,
    )
  lines.push(
    '',
    `Start-up to a 200 from /healthz on the populated store (median of 3): ${fmt(result.startupMs)} ms`,
  )
  return lines.join('\n')
}

function checkBudget(result) {
  const ratio = (name) => result.rows.find((r) => r.case.startsWith(name)).ratio
  const checks = [
    [
      'create application ≥ 0.5 × baseline',
      ratio('create application') >= 0.5,
      fmt(ratio('create application'), 2),
    ],
    ['create policy ≥ 0.45 × baseline', ratio('create policy') >= 0.45, fmt(ratio('create policy'), 2)],
    ['get one ≥ 0.7 × baseline', ratio('get one') >= 0.7, fmt(ratio('get one'), 2)],
    ['list 50 ≥ 0.3 × baseline', ratio('list 50') >= 0.3, fmt(ratio('list 50'), 2)],
    [
      'p99 ≤ 10 ms at half the peak rate',
      result.steady.every((s) => s.p99 <= 10),
      result.steady.map((s) => s.p99).join(' / '),
    ],
    [
      'peak RSS ≤ 150 MB',
      result.rows.every((r) => r.peakRssMb <= 150),
      fmt(Math.max(...result.rows.map((r) => r.peakRssMb))),
    ],
    [
      'no errors',
      result.rows.every((r) => r.errors === 0) && result.steady.every((s) => s.errors === 0),
      'errors',
    ],
    ['start-up < 1 s', result.startupMs < 1000, `${fmt(result.startupMs)} ms`],
  ]
  return checks.map(([name, ok, value]) => `${ok ? 'PASS' : 'FAIL'}  ${name}  (${value})`)
}

async function main() {
  if (!existsSync(join(root, 'dist', 'warden.mjs'))) throw new Error('run `npm run build` first')
  const command = `node bench/run.mjs ${process.argv.slice(2).join(' ')}`.trim()
  console.log(
    `Warden benchmark: ${ROUNDS} rounds × ${DURATION} s, ${CONNECTIONS} connections, ${hasTaskset ? 'load on core 0, server on core 1' : 'no taskset: unpinned'}`,
  )

  baseline.server = await startProcess(['bench/baseline-server.mjs'], {}, { readyPath: '/' })
  await warmUp(baseline.server.port, baseline.case)
  const floor = [...(await measureFloor('node:http')), ...(await measureFloor('fastify'))]

  const results = []
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-'))
  const sqliteFile = opts['sqlite-file'] ?? join(dir, 'bench.db')
  results.push(
    await benchStore('SQLite (WAL, synchronous=FULL)', { DATABASE_URL: `sqlite:${sqliteFile}` }, true),
  )
  if (!opts['sqlite-file']) {
    const size = ['', '-wal']
      .map((s) => (existsSync(sqliteFile + s) ? statSync(sqliteFile + s).size : 0))
      .reduce((a, b) => a + b, 0)
    results[0].storeBytes = size
  }
  if (opts.postgres) {
    const schema = `warden_bench_${randomBytes(4).toString('hex')}`
    const client = new pg.Client({ connectionString: opts.postgres })
    await client.connect()
    await client.query(`create schema ${schema}`)
    const url = new URL(opts.postgres)
    url.searchParams.set('options', `-c search_path=${schema}`)
    try {
      results.push(await benchStore('PostgreSQL', { DATABASE_URL: url.toString() }, false))
    } finally {
      await client.query(`drop schema ${schema} cascade`)
      await client.end()
    }
  }
  rmSync(dir, { recursive: true, force: true })
  baseline.server.proc.kill('SIGTERM')
  const base = summarise('baseline node:http', baseline.rounds)

  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  const md = [`# Warden benchmark ${new Date().toISOString()}`, '', `Command: \`${command}\``, '']
  md.push(
    `Each case's ratio is the median of its rounds' ratios to the baseline round measured just before`,
    `each of them. The baseline (bench/baseline-server.mjs: a bare node:http server that parses a JSON`,
    `body and answers JSON) measured ${fmt(base.rps)} req/s (median of ${baseline.rounds.length} rounds, ${fmt(base.rpsMin)}–${fmt(base.rpsMax)}),`,
    `p50 ${base.p50} ms, p99 ${base.p99} ms, ${base.errors} errors, peak RSS ${fmt(base.peakRssMb)} MB, ${fmt(base.cpuUs)} µs of server CPU a request.`,
    '',
    '## The store without Warden (bench/floor-server.mjs)',
    '',
    'The durable insert of a create and the reads of a get and of a list page as Warden does them on',
    'SQLite, with no validation, auth, rate limit or logging: behind a bare node:http server, then',
    'behind a bare Fastify instance. What the disk and SQLite, then the framework, leave of the',
    'baseline before any of Warden runs.',
    '',
    ...HEADER,
    ...floor.map(row),
    '',
  )
  for (const r of results) {
    md.push(`## ${r.label}`, '', table(r), '')
    if (r.budget && Object.keys(EXTRA_ENV).length > 0)
      md.push(`Not the budget's configuration: Warden ran with ${opts.env.join(' ')}.`, '')
    else if (r.budget) md.push('Budget:', '', ...checkBudget(r).map((l) => `    ${l}`), '')
  }
  const text = md.join('\n')
  console.log(`\n${text}`)
  mkdirSync(join(root, 'bench', 'results'), { recursive: true })
  const name = `${stamp}${opts.label ? `-${opts.label}` : ''}`
  writeFileSync(
    join(root, 'bench', 'results', `${name}.json`),
    `${JSON.stringify({ command, baseline: { ...base, rounds: baseline.rounds }, floor, results }, null, 2)}\n`,
  )
  writeFileSync(join(root, 'bench', 'results', `${name}.md`), `${text}\n`)
  writeFileSync(join(root, 'bench', 'results', 'latest.md'), `${text}\n`)
  console.log(`\nwritten: bench/results/${name}.json and .md`)
}

await runPinned(main)

#!/usr/bin/env node
// Warden's benchmark: every case against the bare node:http baseline measured in the same run.
//
//   npm run bench                                   SQLite (and PostgreSQL with --postgres URL)
//   node bench/run.mjs --rounds 5 --duration 10 --connections 64 --postgres postgres://…/test
//   node bench/run.mjs --sqlite-file /path/big.db   an existing (for example seeded) store
//
// Where taskset exists, the load generator runs on core 0 and the server on core 1.
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import pg from 'pg'

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    postgres: { type: 'string' },
    'sqlite-file': { type: 'string' },
    'no-baseline-pin': { type: 'boolean', default: false },
    label: { type: 'string', default: '' },
  },
})
const ROUNDS = Number(opts.rounds)
const DURATION = Number(opts.duration)
const CONNECTIONS = Number(opts.connections)
const root = new URL('..', import.meta.url).pathname
const hasTaskset = (() => {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

function freePort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
}

/** The node flags of `npm start`, read from package.json so the two never drift apart. */
const START_FLAGS =
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start.match(/--[\w-]+=\S+/g) ?? []

/** Every server this run started, so that none outlives it. */
const children = []

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts a server process pinned to core 1; resolves once `readyPath` answers. */
async function startProcess(args, env, readyPath = '/healthz') {
  const port = await freePort()
  const command = hasTaskset ? 'taskset' : process.execPath
  const argv = hasTaskset ? ['-c', '1', process.execPath, ...args] : args
  const started = performance.now()
  const proc = spawn(command, argv, {
    cwd: root,
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  children.push(proc)
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${proc.exitCode}`)
    const ok = await fetch(`http://127.0.0.1:${port}${readyPath}`).then(
      (r) => r.status < 500,
      () => false,
    )
    if (ok) break
    await sleep(10)
  }
  return { proc, port, startMs: performance.now() - started }
}

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

function load({ port, requests, rate }) {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections: CONNECTIONS,
        duration: DURATION,
        requests,
        ...(rate ? { overallRate: rate } : {}),
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    )
  })
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

const APP_BODY = JSON.stringify({
  name: 'Support bot',
  description: 'Answers customer questions about orders and returns.',
  provider: 'openai',
  model: 'gpt-4o',
  parameters: { system_prompt: 'You are a helpful support agent.', temperature: 0.2, max_tokens: 1024 },
})
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

/** Clock ticks a second, the unit of the CPU times in /proc/<pid>/stat. */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    return 100
  }
})()

/** CPU seconds (user and system) a process has used so far, or NaN where /proc is missing. */
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
  } catch {
    return Number.NaN
  }
}

async function measureCase(port, pid, c) {
  const rounds = []
  for (let i = 0; i < ROUNDS; i++) {
    const cpuBefore = cpuSeconds(pid)
    const { result, peakRssMb } = await sampleRss(pid, () => load({ port, requests: c.requests() }))
    const cpuUs = ((cpuSeconds(pid) - cpuBefore) * 1e6) / result.requests.total
    const errors = result.errors + result.timeouts + result.non2xx
    rounds.push({
      cpuUs,
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors,
      peakRssMb,
    })
  }
  return rounds
}

function summarise(name, rounds, baselineRps) {
  const rps = median(rounds.map((r) => r.rps))
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
    ratio: baselineRps ? rps / baselineRps : 1,
  }
}

async function benchStore(label, env, baselineRps, budget) {
  const adminKey = `bench-admin-${randomBytes(16).toString('hex')}`
  // Started exactly as `npm start` starts it (package.json), V8 flags included.
  const server = await startProcess([...START_FLAGS, 'bin/warden.js', 'serve'], {
    ...env,
    WARDEN_ADMIN_KEY: adminKey,
    // Rate limiting stays on, with a limit no run can reach.
    RATE_LIMIT_PER_MINUTE: '100000000',
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
  for (const c of cases)
    rows.push(summarise(c.name, await measureCase(server.port, server.proc.pid, c), baselineRps))

  // Latency under a steady load at half the measured peak rate of each write and read.
  const steady = []
  for (const c of [cases[0], cases[2]]) {
    const peak = rows.find((r) => r.case === c.name).rps
    const { result } = await sampleRss(server.proc.pid, () =>
      load({ port: server.port, requests: c.requests(), rate: Math.round(peak / 2) }),
    )
    steady.push({
      case: c.name,
      rate: Math.round(peak / 2),
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors: result.non2xx + result.errors,
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
 * the read of a get as Warden does on SQLite, with no framework, validation, auth or logging.
 */
async function measureFloor(baselineRps) {
  const server = await startProcess(['bench/floor-server.mjs'], {}, '/v1/applications/none')
  const json = { 'content-type': 'application/json' }
  await fetch(`http://127.0.0.1:${server.port}/v1/applications`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ id: 'bench', name: 'Bench', description: '' }),
  })
  const cases = [
    {
      name: 'floor: durable insert',
      requests: () => [{ method: 'POST', path: '/v1/applications', headers: json, body: APP_BODY }],
    },
    { name: 'floor: read one', requests: () => [{ method: 'GET', path: '/v1/applications/bench' }] },
  ]
  const rows = []
  for (const c of cases)
    rows.push(summarise(c.name, await measureCase(server.port, server.proc.pid, c), baselineRps))
  server.proc.kill('SIGTERM')
  await new Promise((resolve) => server.proc.on('exit', resolve))
  return rows
}

const fmt = (n, d = 0) => n.toFixed(d)

function table(result, baseline) {
  const lines = [
    `| case | req/s (median) | spread (min–max) | × baseline | p50 ms | p99 ms | errors | peak RSS MB | server CPU µs/req |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| baseline node:http | ${fmt(baseline.rps)} | ${fmt(baseline.rpsMin)}–${fmt(baseline.rpsMax)} | 1.00 | ${baseline.p50} | ${baseline.p99} | ${baseline.errors} | ${fmt(baseline.peakRssMb)} | ${fmt(baseline.cpuUs)} |`,
  ]
  for (const r of result.rows) {
    lines.push(
      `| ${r.case} | ${fmt(r.rps)} | ${fmt(r.rpsMin)}–${fmt(r.rpsMax)} | ${fmt(r.ratio, 2)} | ${r.p50} | ${r.p99} | ${r.errors} | ${fmt(r.peakRssMb)} | ${fmt(r.cpuUs)} |`,
    )
  }
  lines.push(
    '',
    '| steady load at half the peak rate | req/s offered | p50 ms | p99 ms | errors |',
    '|---|---:|---:|---:|---:|',
  )
  for (const s of result.steady) lines.push(`| ${s.case} | ${s.rate} | ${s.p50} | ${s.p99} | ${s.errors} |`)
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
  if (!existsSync(join(root, 'dist', 'cli.js'))) throw new Error('run `npm run build` first')
  const command = `node bench/run.mjs ${process.argv.slice(2).join(' ')}`.trim()
  console.log(
    `Warden benchmark: ${ROUNDS} rounds × ${DURATION} s, ${CONNECTIONS} connections, ${hasTaskset ? 'load on core 0, server on core 1' : 'no taskset: unpinned'}`,
  )

  const baselineServer = await startProcess(['bench/baseline-server.mjs'], {}, '/')
  const baselineRounds = await measureCase(baselineServer.port, baselineServer.proc.pid, {
    requests: () => [
      { method: 'POST', path: '/echo', headers: { 'content-type': 'application/json' }, body: APP_BODY },
    ],
  })
  baselineServer.proc.kill('SIGTERM')
  const baseline = summarise('baseline node:http', baselineRounds)
  const floor = await measureFloor(baseline.rps)

  const results = []
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-'))
  const sqliteFile = opts['sqlite-file'] ?? join(dir, 'bench.db')
  results.push(
    await benchStore(
      'SQLite (WAL, synchronous=FULL)',
      { DATABASE_URL: `sqlite:${sqliteFile}` },
      baseline.rps,
      true,
    ),
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
      results.push(await benchStore('PostgreSQL', { DATABASE_URL: url.toString() }, baseline.rps, false))
    } finally {
      await client.query(`drop schema ${schema} cascade`)
      await client.end()
    }
  }
  rmSync(dir, { recursive: true, force: true })

  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  const md = [`# Warden benchmark ${new Date().toISOString()}`, '', `Command: \`${command}\``, '']
  md.push(
    '## The store without a framework (bench/floor-server.mjs)',
    '',
    'The durable insert of a create and the read of a get as Warden does them on SQLite, in a bare',
    'node:http server: what the disk and SQLite leave of the baseline before any of Warden runs.',
    '',
    '| case | req/s (median) | spread (min–max) | × baseline | p50 ms | p99 ms | errors | server CPU µs/req |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...floor.map(
      (r) =>
        `| ${r.case} | ${fmt(r.rps)} | ${fmt(r.rpsMin)}–${fmt(r.rpsMax)} | ${fmt(r.ratio, 2)} | ${r.p50} | ${r.p99} | ${r.errors} | ${fmt(r.cpuUs)} |`,
    ),
    '',
  )
  for (const r of results) {
    md.push(`## ${r.label}`, '', table(r, baseline), '')
    if (r.budget) md.push('Budget:', '', ...checkBudget(r).map((l) => `    ${l}`), '')
  }
  const text = md.join('\n')
  console.log(`\n${text}`)
  mkdirSync(join(root, 'bench', 'results'), { recursive: true })
  const name = `${stamp}${opts.label ? `-${opts.label}` : ''}`
  writeFileSync(
    join(root, 'bench', 'results', `${name}.json`),
    `${JSON.stringify({ command, baseline, floor, results }, null, 2)}\n`,
  )
  writeFileSync(join(root, 'bench', 'results', `${name}.md`), `${text}\n`)
  writeFileSync(join(root, 'bench', 'results', 'latest.md'), `${text}\n`)
  console.log(`\nwritten: bench/results/${name}.json and .md`)
}

// Pin ourselves (the load generator) to core 0, once.
if (hasTaskset && !process.env.BENCH_PINNED) {
  const child = spawn('taskset', ['-c', '0', process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PINNED: '1' },
  })
  child.on('exit', (code) => process.exit(code ?? 1))
} else {
  await main().finally(() => {
    for (const child of children) child.kill('SIGKILL')
  })
}

#!/usr/bin/env node
// Compares two builds of Warden (or one build under two environments) on one case, at the same
// time: both servers run on core 1, each under its own wrk on core 0, and the kernel shares the
// core between them. The throughput ratio is then the inverse ratio of their CPU cost per
// request, measured under the same conditions at every instant; the machine's drift, which
// moves a standalone figure by tens of percent within minutes, cancels out. Two copies of the
// same build measure within 5% of each other here, the slot of a server counting for part of
// that: run both orders (swap --a and --b) and compare their medians.
//
//   node bench/ab.mjs --a /path/to/checkout-a --b /path/to/checkout-b --case get
//   node bench/ab.mjs --a . --b . --b-env LOG_LEVEL=warn --case post --rounds 5
//   node bench/ab.mjs --a . --b . --a-env METRICS_PORT=0 --case evaluate   (what metrics cost)
//   node bench/ab.mjs --a . --b . --b-env EVALUATION_POOL_MIN_MS=60000 --case reference
//     (the reference evaluation at default settings against itself with the pool kept out)
//   node bench/ab.mjs --case reference --b-case reference-mask
//     (masking against blocking: the reference policy's finding rules with `action: mask`)
//
// Each checkout must be built (`npm run build`). Needs wrk and taskset (Debian: wrk, util-linux).
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { APP_BODY } from './bodies.mjs'
import { REFERENCE_4K_BODY, REFERENCE_POLICY } from './evaluation-cases.mjs'
import { benchArgs, cpuSeconds, envPairs, freePort, median, startFlags, startProcess } from './lib.mjs'

const EVALUATION_BODY = JSON.stringify({
  messages: [
    { role: 'user', content: 'Where is my order 1042? My e-mail is jo@example.com.' },
    { role: 'assistant', content: 'It ships today; the tracking link went to your address.' },
  ],
})
const EVALUATION_POLICY = JSON.stringify({
  id: 'bench',
  rules: [
    { type: 'pii' },
    { type: 'keywords', flagged: ['refund guarantee'] },
    { type: 'regex', value: 'order [0-9]{6}' },
    { type: 'length', value: '4000' },
    { type: 'prompt_injection' },
  ],
  target: ['input', 'output'],
})

const { opts } = benchArgs(
  { rounds: '4' },
  {
    a: { type: 'string', default: '.' },
    b: { type: 'string', default: '.' },
    'a-env': { type: 'string', multiple: true, default: [] },
    'b-env': { type: 'string', multiple: true, default: [] },
    case: { type: 'string', default: 'get' },
    // b's case, when it differs from a's (same request, another policy): `--case reference --b-case reference-mask`.
    'b-case': { type: 'string' },
  },
)

const CASES = {
  get: { method: 'GET', path: () => '/v1/applications/bench' },
  list: { method: 'GET', path: () => '/v1/applications?limit=50' },
  post: { method: 'POST', path: () => '/v1/applications', body: true },
  // One conversation against a policy of five offline rules, logged before it is answered.
  evaluate: { method: 'POST', path: () => '/v1/applications/bench/evaluations', body: EVALUATION_BODY },
  // The reference evaluation: 4 KB of conversation against pii, 100 keywords, two regexes and a length rule.
  reference: {
    method: 'POST',
    path: () => '/v1/applications/bench/evaluations',
    body: REFERENCE_4K_BODY,
    policy: JSON.stringify(REFERENCE_POLICY),
  },
}
// The reference with its finding rules (pii, keywords, regex) masking instead of blocking: the
// same detection, plus the masked conversation built and answered.
CASES['reference-mask'] = {
  ...CASES.reference,
  policy: JSON.stringify({
    ...REFERENCE_POLICY,
    rules: REFERENCE_POLICY.rules.map((r) => (r.type === 'length' ? r : { ...r, action: 'mask' })),
  }),
}
const caseOf = (name) => {
  const found = CASES[name]
  if (!found) throw new Error(`--case must be one of ${Object.keys(CASES).join(', ')}`)
  if (found.method !== CASES[opts.case]?.method || found.body !== CASES[opts.case]?.body) {
    throw new Error('--b-case must send the same request as --case')
  }
  return found
}
const chosen = caseOf(opts.case)

const key = `bench-ab-${randomBytes(16).toString('hex')}`
const dir = mkdtempSync(join(tmpdir(), 'warden-ab-'))

async function start(name, checkout, extraEnv, chosen) {
  const root = resolve(checkout)
  const { proc, base } = await startProcess(
    [...startFlags(root), join(root, 'bin/warden.js'), 'serve'],
    {
      DATABASE_URL: `sqlite:${join(dir, `${name}.db`)}`,
      WARDEN_ADMIN_KEY: key,
      RATE_LIMIT_PER_MINUTE: '100000000',
      // Two servers run at once: each its own metrics port (METRICS_PORT=0 in --a-env or --b-env turns them off).
      METRICS_PORT: String(await freePort()),
      ...extraEnv,
    },
    { cwd: root },
  )
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  await fetch(`${base}/v1/applications`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ id: 'bench', name: 'Bench', description: '' }),
  })
  for (let i = 0; i < 50; i++)
    await fetch(`${base}/v1/applications`, { method: 'POST', headers, body: APP_BODY })
  await fetch(`${base}/v1/applications/bench/policies`, {
    method: 'POST',
    headers,
    body: chosen.policy ?? EVALUATION_POLICY,
  })
  const script = join(dir, `${name}.lua`)
  writeFileSync(
    script,
    [
      `wrk.method = "${chosen.method}"`,
      'wrk.headers["content-type"] = "application/json"',
      `wrk.headers["authorization"] = "Bearer ${key}"`,
      chosen.body ? `wrk.body = ${JSON.stringify(chosen.body === true ? APP_BODY : chosen.body)}` : '',
    ].join('\n'),
  )
  return { name, proc, url: `${base}${chosen.path()}`, script }
}

const load = (server, seconds) =>
  new Promise((done, fail) => {
    const wrk = spawn('taskset', [
      '-c',
      '0',
      'wrk',
      '-t1',
      `-c${opts.connections}`,
      `-d${seconds}s`,
      '-s',
      server.script,
      server.url,
    ])
    let out = ''
    wrk.stdout.on('data', (d) => {
      out += d
    })
    wrk.on('error', fail)
    wrk.on('exit', () => {
      const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? Number.NaN)
      const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN)
      done({ requests, rps, errors: /Non-2xx|Socket errors/.test(out) })
    })
  })

try {
  execFileSync('wrk', ['--version'], { stdio: 'ignore' })
} catch (error) {
  if (error.code === 'ENOENT') throw new Error('bench/ab.mjs needs wrk (apt-get install wrk)')
}
const servers = [
  await start('a', opts.a, envPairs(opts['a-env']), chosen),
  await start('b', opts.b, envPairs(opts['b-env']), caseOf(opts['b-case'] ?? opts.case)),
]
try {
  await Promise.all(servers.map((s) => load(s, 2)))
  const ratios = []
  for (let round = 1; round <= Number(opts.rounds); round++) {
    const cpu = servers.map((s) => cpuSeconds(s.proc.pid))
    const results = await Promise.all(servers.map((s) => load(s, Number(opts.duration))))
    const [a, b] = results.map((r, i) => ({
      ...r,
      cpuUs: ((cpuSeconds(servers[i].proc.pid) - cpu[i]) * 1e6) / r.requests,
    }))
    if (a.errors || b.errors) throw new Error('a server answered with errors; check its output')
    ratios.push(b.rps / a.rps)
    console.log(
      `round ${round}: a ${a.rps.toFixed(0)} req/s, ${a.cpuUs.toFixed(1)} µs CPU/req | b ${b.rps.toFixed(0)} req/s, ${b.cpuUs.toFixed(1)} µs CPU/req | b/a ${(b.rps / a.rps).toFixed(3)}`,
    )
  }
  const sorted = [...ratios].sort((x, y) => x - y)
  console.log(
    `${opts.case}${opts['b-case'] ? ` vs ${opts['b-case']}` : ''}: b/a median ${median(ratios).toFixed(3)} (${sorted[0].toFixed(3)}–${sorted[sorted.length - 1].toFixed(3)}) over ${ratios.length} rounds`,
  )
} finally {
  for (const s of servers) s.proc.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
}

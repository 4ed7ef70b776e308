#!/usr/bin/env node
// Large evaluations beside small ones (issue 22): does a 1 MiB evaluation hold up the 4 KB ones?
//
// - the reference evaluation (evaluation-cases.mjs: 3,696 bytes of body) at half its peak rate, evenly
//   spaced, open loop (lib.mjs `steady`), alone and then while another client sends the 0.9 MiB
//   conversation (945,546 bytes of body, the same policy) twice a second: p50 and p99 of the
//   4 KB requests in both runs, and how much the p99 grew (budget: 5 ms);
// - the event loop's longest hold during single worst-case requests built within the contract's
//   limits (1 MiB body, EVALUATION_MAX_WORK): a client sends GET /healthz one after another while
//   the request runs, and the slowest of those answers is how long the loop was held (at most,
//   plus one /healthz).
//
//   npm run build && node bench/evaluate-mixed.mjs
//   node bench/evaluate-mixed.mjs --checkout /tmp/before      # another build (its dist/ and models/)
//   node bench/evaluate-mixed.mjs --env EVALUATION_POOL_SIZE=0  # this build without the pool
//
// Where taskset exists, the load generator runs on core 0 and Warden on core 1 (its evaluation
// worker too: one core for the whole server); --cores 1-2 gives Warden another set (`taskset -c`).
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { BIG_BODY, REFERENCE_BODY, REFERENCE_POLICY as referencePolicy } from './evaluation-cases.mjs'
import {
  benchArgs,
  envPairs,
  hasTaskset,
  load,
  root,
  runPinned,
  START_FLAGS,
  sleep,
  startProcess,
  steady,
} from './lib.mjs'

const { opts, DURATION, CONNECTIONS } = benchArgs(
  { duration: '10' },
  {
    checkout: { type: 'string', default: root },
    env: { type: 'string', multiple: true, default: [] },
    // A fixed rate for the 4 KB requests instead of half the measured peak (to compare builds at one load).
    rate: { type: 'string' },
    'big-rate': { type: 'string', default: '2' },
    cores: { type: 'string', default: '1' },
  },
)

/** The longest answer of a /healthz sent one after another while `work` runs: the event loop's longest hold. */
async function holdDuring(base, work) {
  let done = false
  let worst = 0
  let probes = 0
  const probe = (async () => {
    while (!done) {
      const started = performance.now()
      await fetch(`${base}/healthz`).then((r) => r.arrayBuffer())
      worst = Math.max(worst, performance.now() - started)
      probes++
      await sleep(1)
    }
  })()
  await sleep(50)
  const started = performance.now()
  const result = await work()
  const ms = performance.now() - started
  done = true
  await probe
  return { holdMs: Math.round(worst * 10) / 10, probes, ms: Math.round(ms), ...result }
}

/** A conversation of `characters` characters of distinct phone numbers: pii's most costly text per character. */
function phoneText(characters) {
  let seed = 7
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed / 2147483648
  }
  let text = ''
  while (text.length < characters)
    text += `call +1 415 ${200 + Math.floor(next() * 700)} ${String(Math.floor(next() * 10000)).padStart(4, '0')} `
  return text.slice(0, characters)
}

/** Digits and spaces: a regex rule `\d` finds one digit in two characters, far past the reported cap. */
const digitText = (characters) => '7 '.repeat(Math.ceil(characters / 2)).slice(0, characters)

async function main() {
  const checkout = opts.checkout
  if (!existsSync(join(checkout, 'dist', 'warden.mjs')))
    throw new Error(`run \`npm run build\` in ${checkout} first`)
  const command = `node bench/evaluate-mixed.mjs ${process.argv.slice(2).join(' ')}`.trim()
  const loadBefore = loadavg()
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-mixed-'))
  const adminKey = `bench-admin-${randomBytes(16).toString('hex')}`
  const extraEnv = envPairs(opts.env)
  const warden = await startProcess(
    [...START_FLAGS, 'bin/warden.js', 'serve'],
    {
      DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`,
      WARDEN_ADMIN_KEY: adminKey,
      RATE_LIMIT_PER_MINUTE: '100000000',
      ...extraEnv,
    },
    { cwd: checkout, core: opts.cores },
  )
  const auth = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }
  const base = warden.base
  const post = async (path, body) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: auth, body })
    const text = await res.text()
    return { status: res.status, json: res.status < 500 ? JSON.parse(text) : text }
  }
  await post('/v1/applications', JSON.stringify({ id: 'ref', name: 'Reference', description: '' }))
  await post('/v1/applications/ref/policies', JSON.stringify(referencePolicy))
  const refPath = '/v1/applications/ref/evaluations'
  const small = await post(refPath, REFERENCE_BODY)
  const big = await post(refPath, BIG_BODY)
  if (small.status !== 200 || big.status !== 200) throw new Error(`setup: ${small.status} ${big.status}`)
  // Let a pool's workers finish starting (each loads the offline models) before measuring.
  await sleep(1500)

  const smallRequest = { method: 'POST', path: refPath, headers: auth, body: REFERENCE_BODY }
  const bigRequest = { method: 'POST', path: refPath, headers: auth, body: BIG_BODY }
  await load({ port: warden.port, requests: [smallRequest], duration: 2, connections: CONNECTIONS })
  const peak = await load({
    port: warden.port,
    requests: [smallRequest],
    duration: 5,
    connections: CONNECTIONS,
  })
  const rate = opts.rate ? Number(opts.rate) : Math.round(peak.requests.average / 2)
  const bigRate = Number(opts['big-rate'])

  const alone = await steady({ port: warden.port, request: smallRequest, rate, duration: DURATION })
  const [mixed, bigs] = await Promise.all([
    steady({ port: warden.port, request: smallRequest, rate, duration: DURATION }),
    steady({ port: warden.port, request: bigRequest, rate: bigRate, duration: DURATION }),
  ])

  // Single worst cases, each sent alone three times; the worst hold of the three.
  const worst = [
    {
      name: '0.9 MiB conversation, the reference policy',
      body: BIG_BODY,
    },
    {
      name: '4,200 characters of distinct phone numbers, drafts pii + regex `\\d` (estimated just under 40 ms: the most an evaluation left on the event loop may cost)',
      body: JSON.stringify({
        messages: [{ role: 'user', content: phoneText(4200) }],
        draft_policies: [
          {
            id: 'd',
            rules: [{ type: 'pii' }, { type: 'regex', value: '\\d' }],
            target: ['user'],
          },
        ],
      }),
    },
    {
      name: '1,000,000 characters, a regex rule `\\d` (500,000 findings, 10,000 reported), redact: true',
      body: JSON.stringify({
        messages: [{ role: 'user', content: digitText(1_000_000) }],
        redact: true,
        draft_policies: [{ id: 'd', rules: [{ type: 'regex', value: '\\d' }], target: ['user'] }],
      }),
    },
    {
      name: '20 drafts × 64 regex rules of 700-character patterns, a 1-message conversation',
      body: JSON.stringify({
        messages: [{ role: 'user', content: 'hello' }],
        draft_policies: Array.from({ length: 20 }, (_, d) => ({
          id: `d${d}`,
          rules: Array.from({ length: 64 }, (_, r) => ({
            type: 'regex',
            value: `(?:a${d}b${r}|${'c'.repeat(700)})+`,
          })),
          target: ['user'],
        })),
      }),
    },
  ]
  const holds = []
  for (const w of worst) {
    if (Buffer.byteLength(w.body) > 1_048_576) throw new Error(`${w.name}: body over 1 MiB`)
    const runs = []
    for (let i = 0; i < 3; i++)
      runs.push(
        await holdDuring(base, async () => {
          const r = await post(refPath, w.body)
          return { status: r.status }
        }),
      )
    const top = runs.reduce((a, b) => (b.holdMs > a.holdMs ? b : a))
    holds.push({ ...w, bytes: Buffer.byteLength(w.body), ...top, statuses: runs.map((r) => r.status) })
  }

  warden.proc.kill('SIGTERM')
  await new Promise((resolve) => warden.proc.once('exit', resolve))
  rmSync(dir, { recursive: true, force: true })
  const loadAfter = loadavg()

  const growth = Math.round((mixed.p99 - alone.p99) * 100) / 100
  const md = [
    `# Warden mixed evaluation benchmark ${new Date().toISOString()}`,
    '',
    `Command: \`${command}\` (checkout ${checkout}; env ${opts.env.join(' ') || 'default'})`,
    '',
    `${hasTaskset ? `load generator on core 0, Warden on cores ${opts.cores}` : 'unpinned'}; load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadAfter.map((l) => l.toFixed(2)).join(' ')}.`,
    '',
    `Peak of the 4 KB reference evaluation: ${Math.round(peak.requests.average)} req/s (${CONNECTIONS} connections); measured at ${rate} req/s for ${DURATION} s each run.`,
    '',
    '| run | 4 KB p50 ms | 4 KB p99 ms | slowest ms | errors |',
    '|---|---:|---:|---:|---:|',
    `| alone | ${alone.p50} | ${alone.p99} | ${alone.max} | ${alone.errors} |`,
    `| with 0.9 MiB × ${bigRate}/s | ${mixed.p50} | ${mixed.p99} | ${mixed.max} | ${mixed.errors} |`,
    '',
    `p99 growth: ${growth} ms (budget 5 ms): ${growth <= 5 ? 'PASS' : 'FAIL'}. The 0.9 MiB requests meanwhile: p50 ${bigs.p50} ms, p99 ${bigs.p99} ms, ${bigs.errors} errors in ${bigs.requests}.`,
    '',
    '## Longest event-loop hold of single worst-case requests',
    '',
    '| request | body bytes | statuses | request ms | longest /healthz ms (hold) |',
    '|---|---:|---|---:|---:|',
    ...holds.map((h) => `| ${h.name} | ${h.bytes} | ${h.statuses.join(', ')} | ${h.ms} | ${h.holdMs} |`),
    '',
  ].join('\n')
  console.log(`\n${md}`)
  mkdirSync(join(root, 'bench', 'results'), { recursive: true })
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  writeFileSync(join(root, 'bench', 'results', `${stamp}-evaluate-mixed.md`), `${md}\n`)
  console.log(`written: bench/results/${stamp}-evaluate-mixed.md`)
}

await runPinned(main)

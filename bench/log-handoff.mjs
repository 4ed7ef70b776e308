#!/usr/bin/env node
// The event loop's time to log one evaluation, in process, for two builds side by side (issue 35:
// the large evaluation's log entry off the event loop).
//
// For each build (its dist/), on a SQLite store of its own: a worker thread makes the redacted
// log of the 0.9 MiB reference conversation (evaluation-cases.mjs `BIG_MESSAGES`) as that build's
// evaluation pool worker does, and hands it to the main thread as that build does (the texts as
// objects, or written and transferred); the main thread logs it (`EvaluationLogService.recordAll`)
// and waits for the commit. Then the 4 KB reference conversation, logged on the event loop as an
// evaluation there is (its redacted texts made and written on the main thread). Printed: the
// event loop's active time (performance.eventLoopUtilization) per evaluation logged, median of
// the rounds; the builds alternate round by round, so that a machine shared with others loads
// both alike. The entries both builds stored are compared byte for byte.
//
//   npx tsc -p tsconfig.build.json && node scripts/bundle.mjs
//   node bench/log-handoff.mjs --checkout /tmp/before --checkout . [--rounds 9] [--repeats 10]
//
// Where taskset exists it runs on cores 0-1 (`--core`), as bench/tenants.mjs runs Warden, its
// worker and writer threads with it.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import SQLite from 'better-sqlite3'
import { BIG_MESSAGES, REFERENCE_MESSAGES } from './evaluation-cases.mjs'
import { benchArgs, hasTaskset, median, root } from './lib.mjs'

const { opts, ROUNDS } = benchArgs(
  { rounds: '9' },
  {
    checkout: { type: 'string', multiple: true, default: [] },
    repeats: { type: 'string', default: '10' },
    core: { type: 'string', default: '0-1' },
  },
)
if (opts.checkout.length === 0) opts.checkout.push(root)
const REPEATS = Number(opts.repeats)

if (hasTaskset && !process.env.BENCH_PINNED) {
  const child = spawnSync('taskset', ['-c', opts.core, process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PINNED: '1' },
  })
  process.exit(child.status ?? 1)
}

/** The pool worker's part, as each build makes it: `written` builds write the texts there. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
;(async () => {
  const { redactedLog } = await import(workerData.redactedLog)
  const json = workerData.logJson ? await import(workerData.logJson) : null
  const outcome = { verdict: 'pass', action: 'allow', override_response: null, policies: [], masking: null, redactable: [] }
  parentPort.on('message', () => {
    const log = redactedLog([], workerData.conversation, outcome)
    if (!json) return parentPort.postMessage(log)
    const texts = json.logTextsJson(log.conversation)
    parentPort.postMessage({ policies: log.policies, texts }, [texts.buffer])
  })
})()
`

async function build(checkout, dir) {
  const dist = (path) => pathToFileURL(join(checkout, 'dist', path)).href
  const { openStore } = await import(dist('store/database.js'))
  const { prepareStore } = await import(dist('services/store-setup.js'))
  const { EvaluationLogService } = await import(dist('services/evaluation-log.service.js'))
  let logJson = null
  try {
    await import(dist('evaluation/log-json.js'))
    logJson = dist('evaluation/log-json.js')
  } catch {}
  const file = join(dir, `${Math.random().toString(36).slice(2)}.db`)
  const store = openStore({ kind: 'sqlite', path: file })
  await prepareStore(store)
  const log = new EvaluationLogService({
    store,
    clock: { nowSeconds: () => 1_800_000_000 },
    content: 'redacted',
    retentionDays: 30,
  })
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: {
      redactedLog: dist('evaluation/redacted-log.js'),
      logJson,
      conversation: { messages: BIG_MESSAGES, context: null },
    },
  })
  return { checkout, file, store, log, worker, written: logJson !== null }
}

const record = (id, conversation, redactedLog) => ({
  caller: { workspaceId: 'w', keyId: 'k', requestId: `r-${id}` },
  appSeq: 1,
  source: 'api',
  conversation,
  outcome: {
    verdict: 'pass',
    action: 'allow',
    override_response: null,
    policies: [],
    masking: null,
    redactable: [],
  },
  answer: {
    id,
    application_id: 'ref',
    created: 1_800_000_000,
    verdict: 'pass',
    action: 'allow',
    override_response: null,
    latency_ms: 12.34,
    policies: [],
  },
  ...(redactedLog ? { redactedLog } : {}),
})

/** The event loop's active ms per evaluation logged, over `REPEATS` of `one`. */
async function activeMs(one) {
  const before = performance.eventLoopUtilization()
  for (let i = 0; i < REPEATS; i++) await one(i)
  return performance.eventLoopUtilization(before).active / REPEATS
}

const dir = mkdtempSync(join(tmpdir(), 'warden-bench-log-handoff-'))
const builds = []
for (const checkout of opts.checkout) builds.push(await build(resolve(checkout), dir))
const small = { messages: REFERENCE_MESSAGES, context: null }
const results = builds.map(() => ({ big: [], small: [] }))
const loadBefore = loadavg()
for (let round = -1; round < ROUNDS; round++) {
  for (const [b, it] of builds.entries()) {
    const prefix = `${round}-`
    const big = await activeMs(async (i) => {
      const made = new Promise((resolve) => it.worker.once('message', resolve))
      it.worker.postMessage('go')
      const redacted = await made
      await it.log.recordAll([
        record(`big-${prefix}${i}`, { messages: BIG_MESSAGES, context: null }, redacted),
      ])
    })
    const few = await activeMs((i) => it.log.recordAll([record(`small-${prefix}${i}`, small)]))
    // The first round warms up.
    if (round >= 0) {
      results[b].big.push(big)
      results[b].small.push(few)
    }
  }
}
const loadAfter = loadavg()
for (const it of builds) {
  await it.worker.terminate()
  await it.store.close()
}

// What each build stored, byte for byte (ids alike across builds).
const stored = builds.map((it) => {
  const db = new SQLite(it.file, { readonly: true })
  const rows = db.prepare('select id, doc, typeof(doc) as type from evaluations order by id').all()
  db.close()
  return rows
})
const same = stored.every(
  (rows) =>
    rows.length === stored[0].length &&
    rows.every((r, i) => r.type === 'text' && r.doc === stored[0][i].doc && r.id === stored[0][i].id),
)

const round2 = (x) => Math.round(x * 100) / 100
const lines = [
  `# The event loop's time to log one evaluation ${new Date().toISOString()}`,
  '',
  `Command: \`node bench/log-handoff.mjs ${process.argv.slice(2).join(' ')}\`; ${hasTaskset ? `pinned to core ${opts.core}` : 'not pinned'}; ${ROUNDS} rounds of ${REPEATS} evaluations each per build, builds alternating; load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadAfter.map((l) => l.toFixed(2)).join(' ')}.`,
  '',
  '| build | 0.9 MiB, pooled: ms (median, min–max of rounds) | 4 KB, event loop: ms (median, min–max) |',
  '|---|---:|---:|',
  ...builds.map((it, b) => {
    const { big, small } = results[b]
    const cell = (xs) => `${round2(median(xs))} (${round2(Math.min(...xs))}–${round2(Math.max(...xs))})`
    return `| ${it.checkout}${it.written ? ' (texts written in the worker)' : ''} | ${cell(big)} | ${cell(small)} |`
  }),
  '',
  `Stored entries identical across builds, byte for byte, and stored as text: ${same ? 'yes' : 'NO'} (${stored[0].length} each).`,
]
console.log(lines.join('\n'))
mkdirSync(join(root, 'bench/results'), { recursive: true })
const out = join(root, 'bench/results', `${new Date().toISOString().replace(/[:.]/g, '-')}-log-handoff.md`)
writeFileSync(out, `${lines.join('\n')}\n`)
console.log(`written: ${out}`)
rmSync(dir, { recursive: true, force: true })
if (!same) process.exitCode = 1

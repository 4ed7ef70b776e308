#!/usr/bin/env node
// What tracing costs (docs/tracing.md): the reference evaluation (bench/evaluation-cases.mjs: a
// 6-message conversation of about 4 KB against the reference policy of pii, keywords, regex and
// length rules) over HTTP, against two Warden processes started alike but for tracing: one with
// no OTEL_* variable (off), one exporting every span over OTLP/HTTP to a receiver on 127.0.0.1
// (on). Rounds alternate off and on; the cost is 1 − the median of each pair's on/off ratio.
// Goal: at most 5%. One run, printed.
//
//   npm run build && node bench/tracing.mjs
//   node bench/tracing.mjs --rounds 5 --duration 10 --connections 32
//
// Where taskset exists, the load generator and the receiver run on core 0, Warden on core 1.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REFERENCE_BODY, REFERENCE_POLICY } from './evaluation-cases.mjs'
import {
  benchArgs,
  cpuSeconds,
  errorsOf,
  hasTaskset,
  load,
  median,
  root,
  runPinned,
  START_FLAGS,
  sleep,
  startProcess,
  stop,
} from './lib.mjs'

const { ROUNDS, DURATION, CONNECTIONS } = benchArgs()
const GOAL = 0.05

/**
 * An OTLP/HTTP receiver that answers each export 200 `{}` and counts its spans as cheaply as it
 * can (occurrences of `"spanId"`, found in the bytes without parsing them): it shares core 0 with
 * the load generator, and must not starve it.
 */
const RECEIVER = `
const http = require('node:http')
const needle = Buffer.from('"spanId"')
let spans = 0
http.createServer((req, res) => {
  const parts = []
  req.on('data', (p) => parts.push(p))
  req.on('end', () => {
    if (req.method === 'POST' && req.url === '/v1/traces') {
      const body = Buffer.concat(parts)
      for (let at = body.indexOf(needle); at !== -1; at = body.indexOf(needle, at + needle.length)) spans++
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    } else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ spans }))
  })
}).listen(Number(process.env.PORT), '127.0.0.1')
`

async function startWarden(env) {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-tracing-'))
  const adminKey = `bench-admin-${randomBytes(16).toString('hex')}`
  const warden = await startProcess([...START_FLAGS, 'bin/warden.js', 'serve'], {
    DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`,
    WARDEN_ADMIN_KEY: adminKey,
    RATE_LIMIT_PER_MINUTE: '100000000',
    ...env,
  })
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }
  const post = async (path, body) => {
    const res = await fetch(`${warden.base}${path}`, { method: 'POST', headers, body })
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    return res.json()
  }
  await post('/v1/applications', JSON.stringify({ id: 'ref', name: 'Reference', description: '' }))
  await post('/v1/applications/ref/policies', JSON.stringify(REFERENCE_POLICY))
  const path = '/v1/applications/ref/evaluations'
  // One answer, checked, so that the figures measure what they claim to.
  const answer = await post(path, REFERENCE_BODY)
  if (answer.verdict !== 'fail') throw new Error('the reference conversation should fail its policy')
  return { ...warden, dir, requests: [{ method: 'POST', path, headers, body: REFERENCE_BODY }] }
}

async function main() {
  if (!existsSync(join(root, 'dist', 'warden.mjs'))) throw new Error('run `npm run build` first')
  console.log(
    `Warden tracing benchmark: ${ROUNDS} rounds × ${DURATION} s, ${CONNECTIONS} connections, ${hasTaskset ? 'load and receiver on core 0, Warden on core 1' : 'no taskset: unpinned'}`,
  )
  const receiver = await startProcess(['-e', RECEIVER], {}, { readyPath: '/', core: 0 })
  const off = await startWarden({})
  const on = await startWarden({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.base,
    OTEL_SERVICE_NAME: 'warden-bench',
  })
  // OpenTelemetry's standard sampler variables: one trace in ten recorded and exported.
  const sampled = await startWarden({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.base,
    OTEL_SERVICE_NAME: 'warden-bench',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.1',
  })
  // A second of load each before measuring: no round measures a cold JIT.
  for (const w of [off, on, sampled])
    await load({ port: w.port, requests: w.requests, duration: 1, connections: CONNECTIONS })

  // A traced server goes on exporting the spans it queued after its load stops, on Warden's
  // core: the next round starts only once the receiver has had nothing new for 300 ms.
  const settled = async () => {
    let last = -1
    for (;;) {
      const { spans } = await fetch(`${receiver.base}/count`).then((r) => r.json())
      if (spans === last) return
      last = spans
      await sleep(300)
    }
  }
  await settled()
  /** A round of load on `w`: its throughput, and Warden's CPU time per request (user and system). */
  const measured = async (w) => {
    const before = cpuSeconds(w.proc.pid)
    const r = await load({ port: w.port, requests: w.requests, duration: DURATION, connections: CONNECTIONS })
    r.cpuUs = ((cpuSeconds(w.proc.pid) - before) * 1e6) / Math.max(1, r.requests.total)
    return r
  }
  const rounds = []
  for (let i = 0; i < ROUNDS; i++) {
    const a = await measured(off)
    const b = await measured(on)
    await settled()
    const c = await measured(sampled)
    rounds.push({
      off: a.requests.average,
      on: b.requests.average,
      sampled: c.requests.average,
      ratio: b.requests.average / a.requests.average,
      sampledRatio: c.requests.average / a.requests.average,
      p99Off: a.latency.p99,
      p99On: b.latency.p99,
      p99Sampled: c.latency.p99,
      cpu: [a.cpuUs, b.cpuUs, c.cpuUs],
      errors: errorsOf(a) + errorsOf(b) + errorsOf(c),
    })
    await settled()
  }
  const exported = await fetch(`${receiver.base}/count`).then((r) => r.json())
  const ratio = median(rounds.map((r) => r.ratio))
  const sampledRatio = median(rounds.map((r) => r.sampledRatio))
  const cost = 1 - ratio
  const sampledCost = 1 - sampledRatio

  console.log('')
  console.log(
    '| round | off req/s | on req/s | on/off | on, 1 in 10 sampled req/s | sampled/off | p99 off / on / sampled ms | CPU µs/req off / on / sampled | errors |',
  )
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  for (const [i, r] of rounds.entries())
    console.log(
      `| ${i + 1} | ${r.off.toFixed(0)} | ${r.on.toFixed(0)} | ${r.ratio.toFixed(3)} | ${r.sampled.toFixed(0)} | ${r.sampledRatio.toFixed(3)} | ${r.p99Off} / ${r.p99On} / ${r.p99Sampled} | ${r.cpu.map((c) => c.toFixed(0)).join(' / ')} | ${r.errors} |`,
    )
  console.log('')
  const verdict = (c) => `${(c * 100).toFixed(1)}%; goal ≤ ${GOAL * 100}%: ${c <= GOAL ? 'met' : 'NOT met'}`
  console.log(`tracing on, every trace recorded: cost ${verdict(cost)} (median of ${ROUNDS} paired rounds)`)
  console.log(
    `tracing on, OTEL_TRACES_SAMPLER=parentbased_traceidratio, ARG 0.1: cost ${verdict(sampledCost)}`,
  )
  const cpu = [0, 1, 2].map((k) => median(rounds.map((r) => r.cpu[k])))
  console.log(
    `Warden's CPU per request (median): off ${cpu[0].toFixed(0)} µs, on ${cpu[1].toFixed(0)} µs (+${((cpu[1] / cpu[0] - 1) * 100).toFixed(1)}%), 1 in 10 sampled ${cpu[2].toFixed(0)} µs (+${((cpu[2] / cpu[0] - 1) * 100).toFixed(1)}%): less moved by other load on the machine than throughput`,
  )
  console.log(`spans received by the OTLP receiver: ${exported.spans}`)

  for (const w of [off, on, sampled]) {
    await stop(w)
    rmSync(w.dir, { recursive: true, force: true })
  }
  await stop(receiver)
}

await runPinned(main)

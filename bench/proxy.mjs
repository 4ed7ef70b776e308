#!/usr/bin/env node
// The guarded chat completion proxy (docs/chat-completions.md) against an upstream that takes as
// long as a model: the same chat completion sent straight to bench/upstream-double.mjs, which
// answers after --delay ms (default 50), and through Warden in front of it, with a reference
// deterministic policy (pii and keywords, on input and output: two evaluations a request, both
// recorded in the evaluation log in one commit).
//
//   node bench/proxy.mjs [--rounds 3] [--duration 5] [--connections 256] [--delay 50]
//
// It prints the budget of the guarded proxy, three lines, each PASS or FAIL:
//
// 1. added p50: one request at a time over a keep-alive connection, timed here; Warden's p50 less
//    the direct p50 of the round just before it, median of the rounds (the streamed case, its
//    events spread over the delay, is measured the same way beside it);
// 2. added p99 at half of Warden's peak: the peak is autocannon with --connections (enough
//    requests in flight to keep Warden busy while each waits --delay ms for the upstream), the
//    median of the rounds, with the CPU Warden used to show it was Warden that saturated; then
//    an open-loop load evenly spaced at half that rate (lib.mjs `steady`, latency from each
//    request's intended start), straight to the upstream and through Warden, round by round: the
//    added p99 is Warden's p99 less the direct p99 of the same round, median of the rounds;
// 3. CPU per proxied request: Warden's CPU time (/proc) per request of the half-peak load,
//    against 2 × the CPU per request of bench/bare-proxy.mjs (a pass-through proxy doing nothing
//    else) at the same rate, plus two reference evaluations: Warden's CPU per
//    POST /v1/applications/support-bot/evaluations at the same rate, once with the proxied
//    request's messages (its input evaluation) and once with those and the upstream's reply as an
//    assistant message (its output evaluation). Each round compares its own figures; the verdict
//    is the median of the rounds' ratios.
//
// Where taskset exists the load (this process) and the upstream run on core 0 and Warden (and
// the bare proxy) on core 1: the upstream is the far side of a network in real life, and a
// direct call and a proxied one leave it the same core.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  benchArgs,
  children,
  cpuSeconds,
  create,
  errorsOf,
  load,
  median,
  hasTaskset as pinned,
  root,
  runPinned,
  START_FLAGS,
  sleep,
  startProcess,
  steady,
} from './lib.mjs'

const { opts, ROUNDS, DURATION, CONNECTIONS } = benchArgs(
  { connections: '256' },
  { delay: { type: 'string', default: '50' } },
)
const DELAY_MS = Number(opts.delay)
const ADMIN_KEY = `wdn_bench_${'x'.repeat(32)}`
const UPSTREAM_KEY = 'sk-bench-upstream-key-0000000000000000'

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

const MESSAGES = [
  { role: 'system', content: 'You are the support agent of an online shop. Answer briefly and politely.' },
  { role: 'user', content: 'Hello! Where is my order 1042? I ordered it last Monday and paid by card.' },
]
const BODY = JSON.stringify({ model: 'bench-model', messages: MESSAGES })
const STREAM_BODY = JSON.stringify({ ...JSON.parse(BODY), stream: true })

const agent = new Agent({ keepAlive: true, maxSockets: 1 })
/** One POST over the keep-alive agent; resolves with its status and body once the whole answer is read. */
function post(port, path, body, headers) {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        const parts = []
        res.on('data', (part) => parts.push(part))
        res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(parts).toString('utf8') }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** Sequential requests for `seconds`: latency quantiles in milliseconds. */
async function sequential(target, seconds) {
  const times = []
  const until = performance.now() + seconds * 1000
  while (performance.now() < until) {
    const t0 = performance.now()
    const { status } = await post(target.port, target.path, target.body, target.headers)
    times.push(performance.now() - t0)
    if (status !== 200) throw new Error(`${target.name} answered ${status}`)
  }
  times.sort((a, b) => a - b)
  return { n: times.length, p50: quantile(times, 0.5), p99: quantile(times, 0.99) }
}

/**
 * Waits until none of `pids` used CPU for 200 ms (at most 5 s): autocannon leaves requests in
 * flight when it stops, and a server still working them off would take CPU from the next
 * measurement, or be charged for it.
 */
async function settle(pids) {
  const until = performance.now() + 5000
  let before = pids.map(cpuSeconds)
  while (performance.now() < until) {
    await sleep(200)
    const now = pids.map(cpuSeconds)
    if (now.every((cpu, i) => cpu - before[i] < 0.005)) return
    before = now
  }
}

/** autocannon with --connections for `seconds`: req/s, and the CPU `pid` used (µs a request, cores busy). */
async function peak(target, seconds, pid) {
  await settle(servers)
  const cpu0 = cpuSeconds(pid)
  const t0 = performance.now()
  const result = await load({
    port: target.port,
    requests: [
      {
        method: 'POST',
        path: target.path,
        headers: { 'content-type': 'application/json', ...target.headers },
        body: target.body,
      },
    ],
    connections: CONNECTIONS,
    duration: seconds,
  })
  const cpu = cpuSeconds(pid) - cpu0
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: errorsOf(result),
    cpuUs: (cpu / result.requests.total) * 1e6,
    cores: cpu / ((performance.now() - t0) / 1000),
  }
}

/** An open-loop load at `rate` for DURATION seconds (lib.mjs `steady`), with the CPU `pid` used a request. */
async function open(target, rate, pid) {
  await settle(servers)
  const cpu0 = cpuSeconds(pid)
  const result = await steady({
    port: target.port,
    request: {
      method: 'POST',
      path: target.path,
      headers: { 'content-type': 'application/json', ...target.headers },
      body: target.body,
    },
    rate,
    duration: DURATION,
  })
  return { ...result, cpuUs: ((cpuSeconds(pid) - cpu0) / result.requests) * 1e6 }
}

const api = (port, path, payload) => create(port, ADMIN_KEY, path, payload)

/** The pids of the servers on core 1, Warden and the bare proxy. */
const servers = []

const fmt = (x, digits = 2) => x.toFixed(digits)
const int = (x) => Math.round(x).toLocaleString('en-US')
const spread = (xs, digits = 2) => `${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)}`
const progress = (line) => process.stderr.write(`${line}\n`)

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-proxy-'))
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  const started = performance.now()
  const loadBefore = loadavg()
  const lines = []
  const say = (line = '') => {
    lines.push(line)
    process.stdout.write(`${line}\n`)
  }
  try {
    const upstream = await startProcess(
      ['bench/upstream-double.mjs'],
      { DELAY_MS: String(DELAY_MS) },
      { readyPath: '/', core: 0 },
    )
    const warden = await startProcess([...START_FLAGS, 'bin/warden.js', 'serve'], {
      DATABASE_URL: `sqlite:${join(dir, 'warden.db')}`,
      WARDEN_ADMIN_KEY: ADMIN_KEY,
      RATE_LIMIT_PER_MINUTE: '100000000',
      PROVIDER_BENCH_BASE_URL: `http://127.0.0.1:${upstream.port}/v1`,
      PROVIDER_BENCH_API_KEY: UPSTREAM_KEY,
    })
    const bare = await startProcess(
      ['bench/bare-proxy.mjs'],
      {
        UPSTREAM_URL: `http://127.0.0.1:${upstream.port}/v1/chat/completions`,
      },
      { readyPath: '/' },
    )
    servers.push(warden.proc.pid, bare.proc.pid)
    await api(warden.port, '/v1/applications', {
      id: 'support-bot',
      name: 'Support bot',
      description: 'The proxy benchmark',
      provider: 'bench',
      model: 'bench-model',
      parameters: { temperature: 0.2, max_tokens: 256 },
    })
    await api(warden.port, '/v1/applications/support-bot/policies', {
      id: 'no-pii',
      rules: [{ type: 'pii' }],
      target: ['input', 'output'],
      override_response: 'Sorry, I cannot share that.',
    })
    await api(warden.port, '/v1/applications/support-bot/policies', {
      id: 'no-promises',
      rules: [
        { type: 'keywords', flagged: ['refund guarantee', 'legal advice', 'wire transfer', 'gift card'] },
      ],
      target: ['input', 'output'],
      override_response: 'I cannot promise that; a colleague will follow up.',
    })

    const headers = { authorization: `Bearer ${ADMIN_KEY}` }
    const direct = {
      name: 'direct',
      port: upstream.port,
      path: '/v1/chat/completions',
      body: BODY,
      headers: {},
    }
    const proxied = {
      name: 'through Warden',
      port: warden.port,
      path: '/v1/applications/support-bot/chat/completions',
      body: BODY,
      headers,
    }
    const bareProxy = { name: 'bare proxy', port: bare.port, path: '/', body: BODY, headers: {} }
    const directStream = { ...direct, name: 'direct, streamed', body: STREAM_BODY }
    const proxiedStream = { ...proxied, name: 'through Warden, streamed', body: STREAM_BODY }

    // The reference evaluations: what the proxy evaluates, asked of the evaluation endpoint. The
    // reply is the upstream's own, read from one proxied answer, which is checked to be allowed so
    // that every figure measures a completion relayed as it came.
    const answer = await post(proxied.port, proxied.path, BODY, headers)
    const completion = JSON.parse(answer.text)
    if (answer.status !== 200 || completion.warden?.action !== 'allow')
      throw new Error(`the proxied completion was not allowed: ${answer.status} ${answer.text}`)
    const reply = completion.choices[0].message.content
    const evaluations = '/v1/applications/support-bot/evaluations'
    const inputEvaluation = {
      name: 'input evaluation',
      port: warden.port,
      path: evaluations,
      body: JSON.stringify({ messages: MESSAGES }),
      headers,
    }
    const outputEvaluation = {
      ...inputEvaluation,
      name: 'output evaluation',
      body: JSON.stringify({ messages: [...MESSAGES, { role: 'assistant', content: reply }] }),
    }
    for (const target of [inputEvaluation, outputEvaluation]) {
      const { status, text } = await post(target.port, target.path, target.body, headers)
      if (status !== 200 || JSON.parse(text).action !== 'allow')
        throw new Error(`the ${target.name} did not allow: ${status} ${text}`)
    }

    const command = `node bench/proxy.mjs --rounds ${ROUNDS} --duration ${DURATION} --connections ${CONNECTIONS} --delay ${DELAY_MS}`
    say(`# Warden proxy benchmark ${new Date().toISOString()}`)
    say()
    say(
      `Command: \`${command}\` (${pinned ? 'load and upstream on core 0, Warden and the bare proxy on core 1' : 'no taskset: unpinned'}; Node ${process.versions.node}). The upstream double answers after ${DELAY_MS} ms (a stream's events spread evenly over that time). Policies: pii (all kinds) and keywords (4 phrases), each on input and output. Load average before: ${loadBefore.map((l) => fmt(l)).join(' ')}.`,
    )
    // Warm-up: every path once, and Warden and the bare proxy under load, so no round measures a cold JIT.
    progress('warming up')
    for (const target of [direct, proxied, directStream, proxiedStream, inputEvaluation, outputEvaluation])
      await sequential(target, 1)
    await peak(proxied, 2, warden.proc.pid)
    await peak(bareProxy, 1, bare.proc.pid)

    // 1. One request at a time.
    const latency = { plain: [], stream: [] }
    for (let round = 0; round < ROUNDS; round++) {
      progress(`one at a time, round ${round + 1} of ${ROUNDS}`)
      for (const [kind, d, p] of [
        ['plain', direct, proxied],
        ['stream', directStream, proxiedStream],
      ]) {
        const a = await sequential(d, DURATION / 2)
        const b = await sequential(p, DURATION / 2)
        latency[kind].push({ direct: a, proxied: b, added: b.p50 - a.p50 })
      }
    }

    // 2. Warden's peak, then the bare proxy's with the same connections: if the bare proxy goes
    // faster, the load generator and the upstream were not what held Warden's peak.
    const peaks = []
    for (let round = 0; round < ROUNDS; round++) {
      progress(`peak, round ${round + 1} of ${ROUNDS}`)
      peaks.push(await peak(proxied, DURATION, warden.proc.pid))
    }
    progress('peak of the bare proxy')
    const barePeak = await peak(bareProxy, DURATION, bare.proc.pid)
    const peakRps = median(peaks.map((r) => r.rps))
    const rate = Math.max(1, Math.round(peakRps / 2))

    // 2 and 3. Open loop at half the peak: direct, through Warden, the bare proxy, and the two
    // reference evaluations, round by round.
    const half = []
    for (let round = 0; round < ROUNDS; round++) {
      progress(`open loop at ${rate} req/s, round ${round + 1} of ${ROUNDS}`)
      const d = await open(direct, rate, upstream.proc.pid)
      const w = await open(proxied, rate, warden.proc.pid)
      const b = await open(bareProxy, rate, bare.proc.pid)
      const i = await open(inputEvaluation, rate, warden.proc.pid)
      const o = await open(outputEvaluation, rate, warden.proc.pid)
      const budgetUs = 2 * b.cpuUs + i.cpuUs + o.cpuUs
      half.push({
        direct: d,
        proxied: w,
        bare: b,
        inputEvaluation: i,
        outputEvaluation: o,
        addedP99: w.p99 - d.p99,
        addedP50: w.p50 - d.p50,
        budgetUs,
        cpuRatio: w.cpuUs / budgetUs,
      })
    }
    const loadAfter = loadavg()

    say()
    say(
      `## 1. One request at a time (ms; medians of ${ROUNDS} rounds of ${DURATION / 2} s each side, spread of the added p50)`,
    )
    say()
    say(
      '| case | direct p50 | through Warden p50 | added p50 (spread) | direct p99 | through Warden p99 | requests a round |',
    )
    say('|---|---:|---:|---:|---:|---:|---:|')
    for (const kind of ['plain', 'stream']) {
      const rows = latency[kind]
      const added = rows.map((r) => r.added)
      say(
        `| ${kind === 'plain' ? 'chat completion' : 'streamed (9 events)'} | ${fmt(median(rows.map((r) => r.direct.p50)))} | ${fmt(median(rows.map((r) => r.proxied.p50)))} | ${fmt(median(added))} (${spread(added)}) | ${fmt(median(rows.map((r) => r.direct.p99)))} | ${fmt(median(rows.map((r) => r.proxied.p99)))} | ${Math.round(median(rows.map((r) => r.proxied.n)))} |`,
      )
    }
    say()
    say(`## 2. Warden's peak, ${CONNECTIONS} connections (autocannon, ${DURATION} s a round)`)
    say()
    say('| round | through Warden req/s | p50 ms | p99 ms | errors | Warden CPU µs/req | Warden cores busy |')
    say('|---:|---:|---:|---:|---:|---:|---:|')
    for (const [n, r] of peaks.entries())
      say(
        `| ${n + 1} | ${int(r.rps)} | ${r.p50} | ${r.p99} | ${r.errors} | ${int(r.cpuUs)} | ${fmt(r.cores)} |`,
      )
    say()
    say(
      `Peak: ${int(peakRps)} req/s (median). The bare proxy with the same connections and upstream: ${int(barePeak.rps)} req/s (p50 ${barePeak.p50} ms, ${barePeak.errors} errors, ${int(barePeak.cpuUs)} µs of CPU a request, ${fmt(barePeak.cores)} cores busy)${barePeak.rps > peakRps * 1.5 ? ': the load generator and the upstream carry far more than Warden’s peak, so the peak is Warden’s' : ': not well above Warden’s peak, so the load generator or the upstream may have held it'}.`,
    )
    say()
    say(
      `## 2 and 3. Open loop at ${int(rate)} req/s, half the peak (lib.mjs \`steady\`, ${DURATION} s each, ms from each request's intended start; CPU µs a request, from /proc)`,
    )
    say()
    say(
      '| round | direct p50 | direct p99 | through Warden p50 | through Warden p99 | added p99 | Warden CPU µs/req | Warden cores busy | bare proxy µs/req | input evaluation µs/req | output evaluation µs/req | 2 × bare + evaluations | Warden ÷ that | errors |',
    )
    say('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for (const [n, r] of half.entries()) {
      const errors = ['direct', 'proxied', 'bare', 'inputEvaluation', 'outputEvaluation'].reduce(
        (a, k) => a + r[k].errors,
        0,
      )
      say(
        `| ${n + 1} | ${fmt(r.direct.p50)} | ${fmt(r.direct.p99)} | ${fmt(r.proxied.p50)} | ${fmt(r.proxied.p99)} | ${fmt(r.addedP99)} | ${int(r.proxied.cpuUs)} | ${fmt((r.proxied.cpuUs * rate) / 1e6)} | ${int(r.bare.cpuUs)} | ${int(r.inputEvaluation.cpuUs)} | ${int(r.outputEvaluation.cpuUs)} | ${int(r.budgetUs)} | ${fmt(r.cpuRatio)} | ${errors} |`,
      )
    }
    say()
    const halfUs = median(half.map((r) => r.proxied.cpuUs))
    const peakUs = median(peaks.map((r) => r.cpuUs))
    say(
      `Warden cores busy is its CPU per request times the rate. Its CPU per proxied request was ${int(peakUs)} µs at the peak (${fmt(median(peaks.map((r) => r.cores)))} cores busy) and is ${int(halfUs)} µs at half of it (${fmt((halfUs * rate) / 1e6)} cores busy)${halfUs > 1.1 * peakUs ? ': a request costs more when fewer requests share each commit and each turn of the event loop, so half of the peak rate takes more than half of the CPU the peak did' : ''}.`,
    )
    say()
    say(
      `A reference evaluation is Warden's CPU per \`POST ${evaluations}\` at the same rate, in the same round, with the policies the proxy applies: the input one with the proxied request's messages (system and user), the output one with those and the upstream's reply as an assistant message. Each is a whole request (authentication, its own evaluation-log commit, the answer), so it holds more than the evaluation the proxy does inside a completion. The CPU allowance of a proxied request is 2 × the bare proxy's CPU per request plus the input and the output evaluation's.`,
    )
    say()
    const addedP50 = median(latency.plain.map((r) => r.added))
    const m = (f) => median(half.map(f))
    const addedP99 = m((r) => r.addedP99)
    const cpuRatio = m((r) => r.cpuRatio)
    const errors =
      peaks.reduce((a, r) => a + r.errors, 0) +
      half.reduce(
        (a, r) =>
          a +
          r.direct.errors +
          r.proxied.errors +
          r.bare.errors +
          r.inputEvaluation.errors +
          r.outputEvaluation.errors,
        0,
      )
    const verdict = (ok) => (ok ? 'PASS' : 'FAIL')
    say(
      `Budget (against an upstream that answers in ${DELAY_MS} ms; every figure is the median of its ${ROUNDS} rounds, a verdict that of the rounds' own differences or ratios; ${errors} errors; load average before ${fmt(loadBefore[0])}, after ${fmt(loadAfter[0])}):`,
    )
    say()
    const bareUs = m((r) => r.bare.cpuUs)
    const inputUs = m((r) => r.inputEvaluation.cpuUs)
    const outputUs = m((r) => r.outputEvaluation.cpuUs)
    say(
      `    ${verdict(addedP50 <= 2)}  added p50 ≤ 2 ms, one request at a time: ${fmt(addedP50)} ms  (rounds ${spread(latency.plain.map((r) => r.added))}; p50 ${fmt(median(latency.plain.map((r) => r.proxied.p50)))} through Warden, ${fmt(median(latency.plain.map((r) => r.direct.p50)))} direct)`,
    )
    say(
      `    ${verdict(addedP99 <= 10)}  added p99 ≤ 10 ms at half of Warden's peak: ${fmt(addedP99)} ms at ${int(rate)} req/s, the peak ${int(peakRps)} req/s  (rounds ${spread(half.map((r) => r.addedP99))}; p99 ${fmt(m((r) => r.proxied.p99))} through Warden, ${fmt(m((r) => r.direct.p99))} direct; p50 ${fmt(m((r) => r.proxied.p50))} and ${fmt(m((r) => r.direct.p50))})`,
    )
    say(
      `    ${verdict(cpuRatio <= 1)}  CPU per proxied request ≤ 2 × bare proxy + two reference evaluations: ${fmt(cpuRatio)} × the allowance  (rounds ${spread(half.map((r) => r.cpuRatio))}; ${int(m((r) => r.proxied.cpuUs))} µs through Warden against 2 × ${int(bareUs)} + ${int(inputUs)} + ${int(outputUs)} = ${int(2 * bareUs + inputUs + outputUs)} µs)`,
    )
    say()
    say(`Run time ${fmt((performance.now() - started) / 1000, 0)} s.`)
    mkdirSync(join(root, 'bench/results'), { recursive: true })
    writeFileSync(join(root, `bench/results/${stamp}-proxy.md`), `${lines.join('\n')}\n`)
    writeFileSync(
      join(root, `bench/results/${stamp}-proxy.json`),
      `${JSON.stringify(
        {
          command,
          rounds: ROUNDS,
          duration: DURATION,
          connections: CONNECTIONS,
          delayMs: DELAY_MS,
          pinned,
          loadBefore: loadBefore.map((l) => fmt(l)).join(' '),
          loadAfter: loadAfter.map((l) => fmt(l)).join(' '),
          latency,
          peaks,
          barePeak,
          rate,
          half,
          budget: { addedP50, addedP99, cpuRatio, errors },
        },
        null,
        2,
      )}\n`,
    )
    progress(`written: bench/results/${stamp}-proxy.md`)
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
    agent.destroy()
    await sleep(200)
    rmSync(dir, { recursive: true, force: true })
  }
}

await runPinned(main)

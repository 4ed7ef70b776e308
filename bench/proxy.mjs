#!/usr/bin/env node
// The guarded chat completion proxy's own cost (docs/chat-completions.md): the same chat completion
// sent straight to an upstream that answers at once (bench/upstream-double.mjs) and through
// Warden in front of it, with a reference deterministic policy (pii and keywords, on input and
// output: two evaluations a request, both recorded in the evaluation log).
//
//   node bench/proxy.mjs [--rounds 3] [--duration 5] [--connections 32]
//
// Latency: one request at a time over a keep-alive connection, timed here to the microsecond;
// the added p50 is Warden's p50 less the direct p50 of the round just before it. Throughput:
// autocannon with --connections, each Warden round paired with a direct round just before it.
// Beside them, bench/bare-proxy.mjs (a pass-through proxy doing nothing else) shows the ceiling of
// any proxy's throughput here. Where taskset exists the load (this process) and the upstream run
// on core 0 and Warden (and the bare proxy) on core 1: the upstream is the far side of a network
// in real life, and a direct call and a proxied one leave it the same core.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  benchArgs,
  children,
  cpuSeconds,
  load,
  median,
  hasTaskset as pinned,
  root,
  runPinned,
  START_FLAGS,
  sleep,
  startProcess,
} from './lib.mjs'

const { ROUNDS, DURATION, CONNECTIONS } = benchArgs()
const ADMIN_KEY = `wdn_bench_${'x'.repeat(32)}`
const UPSTREAM_KEY = 'sk-bench-upstream-key-0000000000000000'

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

const BODY = JSON.stringify({
  model: 'bench-model',
  messages: [
    { role: 'system', content: 'You are the support agent of an online shop. Answer briefly and politely.' },
    { role: 'user', content: 'Hello! Where is my order 1042? I ordered it last Monday and paid by card.' },
  ],
})
const STREAM_BODY = JSON.stringify({ ...JSON.parse(BODY), stream: true })

const agent = new Agent({ keepAlive: true, maxSockets: 1 })
/** One POST over the keep-alive agent; resolves with its status once the whole answer is read. */
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
        res.resume()
        res.on('end', () => resolve(res.statusCode))
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
    const status = await post(target.port, target.path, target.body, target.headers)
    times.push(performance.now() - t0)
    if (status !== 200) throw new Error(`${target.name} answered ${status}`)
  }
  times.sort((a, b) => a - b)
  return { n: times.length, p50: quantile(times, 0.5), p99: quantile(times, 0.99) }
}

async function cannon(target, seconds, pid) {
  const cpu0 = cpuSeconds(pid)
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
  const errors = result.errors + result.non2xx
  const cpuUs = ((cpuSeconds(pid) - cpu0) / result.requests.total) * 1e6
  return { rps: result.requests.average, errors, cpuUs }
}

const api = (port, path, payload) =>
  fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` },
    body: JSON.stringify(payload),
  }).then(async (r) => {
    if (r.status !== 201) throw new Error(`${path}: ${r.status} ${await r.text()}`)
  })

const fmt = (x, digits = 2) => x.toFixed(digits)

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-proxy-'))
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  const lines = []
  const say = (line = '') => {
    lines.push(line)
    process.stdout.write(`${line}\n`)
  }
  try {
    const upstream = await startProcess(['bench/upstream-double.mjs'], {}, { readyPath: '/', core: 0 })
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

    say(`# Warden proxy benchmark ${new Date().toISOString()}`)
    say()
    say(
      `Command: \`node bench/proxy.mjs --rounds ${ROUNDS} --duration ${DURATION} --connections ${CONNECTIONS}\` (${pinned ? 'load and upstream on core 0, Warden on core 1' : 'no taskset: unpinned'}; Node ${process.versions.node}). Policies: pii (all kinds) and keywords (4 phrases), each on input and output.`,
    )
    // Warm-up: every path once under load, so no round measures a cold JIT.
    for (const target of [direct, proxied, directStream, proxiedStream]) await sequential(target, 1)
    await cannon(proxied, 1, warden.proc.pid)

    const latency = { plain: [], stream: [] }
    for (let round = 0; round < ROUNDS; round++) {
      for (const [kind, d, p] of [
        ['plain', direct, proxied],
        ['stream', directStream, proxiedStream],
      ]) {
        const a = await sequential(d, DURATION / 2)
        const b = await sequential(p, DURATION / 2)
        latency[kind].push({ direct: a, proxied: b, added: b.p50 - a.p50 })
      }
    }
    const throughput = []
    for (let round = 0; round < ROUNDS; round++) {
      const a = await cannon(direct, DURATION, upstream.proc.pid)
      const b = await cannon(proxied, DURATION, warden.proc.pid)
      const c = await cannon(bareProxy, DURATION, bare.proc.pid)
      throughput.push({
        direct: a.rps,
        proxied: b.rps,
        ratio: b.rps / a.rps,
        bare: c.rps,
        bareRatio: c.rps / a.rps,
        bareCpuUs: c.cpuUs,
        errors: a.errors + b.errors + c.errors,
        upstreamCpuUs: a.cpuUs,
        wardenCpuUs: b.cpuUs,
      })
    }

    say()
    say('## Latency, one request at a time (ms; medians of the rounds, spread of the added p50)')
    say()
    say(
      '| case | direct p50 | through Warden p50 | added p50 (spread) | direct p99 | through Warden p99 | requests a round |',
    )
    say('|---|---:|---:|---:|---:|---:|---:|')
    for (const kind of ['plain', 'stream']) {
      const rows = latency[kind]
      const added = rows.map((r) => r.added)
      say(
        `| ${kind === 'plain' ? 'chat completion' : 'streamed (6 chunks)'} | ${fmt(median(rows.map((r) => r.direct.p50)))} | ${fmt(median(rows.map((r) => r.proxied.p50)))} | ${fmt(median(added))} (${fmt(Math.min(...added))}–${fmt(Math.max(...added))}) | ${fmt(median(rows.map((r) => r.direct.p99)))} | ${fmt(median(rows.map((r) => r.proxied.p99)))} | ${Math.round(median(rows.map((r) => r.proxied.n)))} |`,
      )
    }
    say()
    say(`## Throughput, ${CONNECTIONS} connections (req/s; ratio = median of the paired rounds)`)
    say()
    say(
      '| direct | through Warden | × direct (median, spread) | errors | upstream CPU µs/req | Warden CPU µs/req | bare proxy (bench/bare-proxy.mjs) | its × direct | its CPU µs/req |',
    )
    say('|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    const ratios = throughput.map((r) => r.ratio)
    const m = (key) => median(throughput.map((r) => r[key]))
    say(
      `| ${Math.round(m('direct'))} | ${Math.round(m('proxied'))} | ${fmt(median(ratios))} (${fmt(Math.min(...ratios))}–${fmt(Math.max(...ratios))}) | ${throughput.reduce((n, r) => n + r.errors, 0)} | ${Math.round(m('upstreamCpuUs'))} | ${Math.round(m('wardenCpuUs'))} | ${Math.round(m('bare'))} | ${fmt(m('bareRatio'))} | ${Math.round(m('bareCpuUs'))} |`,
    )
    say()
    say(
      'The bare proxy forwards each body over a keep-alive connection and relays the answer, with nothing else: the most any proxy in Node reaches against this upstream.',
    )
    say()
    const addedP50 = median(latency.plain.map((r) => r.added))
    say('Budget:')
    say()
    say(`    ${addedP50 <= 2 ? 'PASS' : 'FAIL'}  added p50 ≤ 2 ms  (${fmt(addedP50)} ms)`)
    say(`    ${median(ratios) >= 0.5 ? 'PASS' : 'FAIL'}  throughput ≥ 0.5 × direct  (${fmt(median(ratios))})`)
    mkdirSync(join(root, 'bench/results'), { recursive: true })
    writeFileSync(join(root, `bench/results/${stamp}-proxy.md`), `${lines.join('\n')}\n`)
    writeFileSync(
      join(root, `bench/results/${stamp}-proxy.json`),
      `${JSON.stringify({ rounds: ROUNDS, duration: DURATION, connections: CONNECTIONS, pinned, latency, throughput }, null, 2)}\n`,
    )
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
    agent.destroy()
    await sleep(200)
    rmSync(dir, { recursive: true, force: true })
  }
}

await runPinned(main)

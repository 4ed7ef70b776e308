#!/usr/bin/env node
// The guarded Responses route (docs/agents.md) against the guarded chat route: the same reply
// asked of bench/upstream-double.mjs straight, and through Warden, once as a chat completion and
// once as a Response, whole and streamed, with the proxy benchmark's reference policies (pii and
// keywords on input and output: two evaluations a request, logged in one commit). One request at
// a time over a keep-alive connection, timed here: each case's p50 and p99, Warden's added p50
// (its p50 less the direct p50 of the same API), and what /responses adds beyond the chat route.
//
//   node bench/responses.mjs [--rounds 1] [--duration 5] [--delay 50]
import { mkdtempSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchArgs, children, create, median, START_FLAGS, startProcess } from './lib.mjs'

const { opts, ROUNDS, DURATION } = benchArgs({ rounds: '1' }, { delay: { type: 'string', default: '50' } })
const DELAY_MS = Number(opts.delay)
const ADMIN_KEY = `wdn_bench_${'x'.repeat(32)}`
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

const SYSTEM = 'You are the support agent of an online shop. Answer briefly and politely.'
const USER = 'Hello! Where is my order 1042? I ordered it last Monday and paid by card.'
const CHAT = {
  model: 'bench-model',
  messages: [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: USER },
  ],
}
const RESPONSES = { model: 'bench-model', instructions: SYSTEM, input: [{ role: 'user', content: USER }] }

const agent = new Agent({ keepAlive: true, maxSockets: 1 })
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

async function sequential(target, seconds) {
  const times = []
  const until = performance.now() + seconds * 1000
  while (performance.now() < until) {
    const t0 = performance.now()
    const { status, text } = await post(target.port, target.path, target.body, target.headers)
    times.push(performance.now() - t0)
    if (status !== 200) throw new Error(`${target.name} answered ${status}: ${text.slice(0, 200)}`)
  }
  times.sort((a, b) => a - b)
  return { n: times.length, p50: quantile(times, 0.5), p99: quantile(times, 0.99) }
}

const fmt = (x) => x.toFixed(2)

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-responses-'))
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
    })
    const api = (path, payload) => create(warden.port, ADMIN_KEY, path, payload)
    await api('/v1/applications', {
      id: 'support-bot',
      name: 'Support bot',
      description: '',
      provider: 'bench',
      model: 'bench-model',
    })
    await api('/v1/applications/support-bot/policies', {
      id: 'no-pii',
      rules: [{ type: 'pii' }],
      target: ['input', 'output'],
      override_response: 'Sorry, I cannot share that.',
    })
    await api('/v1/applications/support-bot/policies', {
      id: 'no-promises',
      rules: [
        { type: 'keywords', flagged: ['refund guarantee', 'legal advice', 'wire transfer', 'gift card'] },
      ],
      target: ['input', 'output'],
      override_response: 'I cannot promise that; a colleague will follow up.',
    })
    const auth = { authorization: `Bearer ${ADMIN_KEY}` }
    const cases = []
    for (const stream of [false, true])
      for (const [name, body, upstreamPath, wardenPath] of [
        ['chat', CHAT, '/v1/chat/completions', '/v1/applications/support-bot/chat/completions'],
        ['responses', RESPONSES, '/v1/responses', '/v1/applications/support-bot/responses'],
      ]) {
        const text = JSON.stringify(stream ? { ...body, stream } : body)
        const label = `${name}${stream ? ', streamed' : ''}`
        cases.push({
          label,
          direct: {
            name: `${label} direct`,
            port: upstream.port,
            path: upstreamPath,
            body: text,
            headers: {},
          },
          warden: {
            name: `${label} through Warden`,
            port: warden.port,
            path: wardenPath,
            body: text,
            headers: auth,
          },
        })
      }
    // Warm-up: each path a second.
    for (const c of cases) {
      await sequential(c.direct, 1)
      await sequential(c.warden, 1)
    }
    const added = new Map(cases.map((c) => [c.label, []]))
    const rows = new Map(cases.map((c) => [c.label, []]))
    for (let round = 0; round < ROUNDS; round++)
      for (const c of cases) {
        const direct = await sequential(c.direct, DURATION)
        const through = await sequential(c.warden, DURATION)
        added.get(c.label).push(through.p50 - direct.p50)
        rows.get(c.label).push({ direct, through })
        process.stderr.write(
          `round ${round + 1} ${c.label}: direct p50 ${fmt(direct.p50)} ms, Warden p50 ${fmt(through.p50)} ms (${through.n} requests)\n`,
        )
      }
    const say = (line = '') => process.stdout.write(`${line}\n`)
    say(`Upstream delay ${DELAY_MS} ms, ${ROUNDS} round(s) × ${DURATION} s a case, one request at a time.`)
    say()
    say('| case | direct p50 | Warden p50 | Warden p99 | added p50 |')
    say('|---|---|---|---|---|')
    for (const c of cases) {
      const last = rows.get(c.label).at(-1)
      say(
        `| ${c.label} | ${fmt(last.direct.p50)} ms | ${fmt(last.through.p50)} ms | ${fmt(last.through.p99)} ms | ${fmt(median(added.get(c.label)))} ms |`,
      )
    }
    say()
    const beyond = (a, b) => median(added.get(a)) - median(added.get(b))
    say(
      `/responses adds beyond the chat route: whole ${fmt(beyond('responses', 'chat'))} ms, streamed ${fmt(beyond('responses, streamed', 'chat, streamed'))} ms (added p50, median of rounds).`,
    )
  } finally {
    for (const child of children) child.kill('SIGTERM')
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()

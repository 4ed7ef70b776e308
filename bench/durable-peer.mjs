#!/usr/bin/env node
// The reference evaluation (bench/evaluation-cases.mjs: 4 KB under pii, 100 keywords, two regex
// rules and length, logged) against its durable-log peer (bench/durable-peer-server.mjs: a bare
// node:http server that parses the body and answers once it is appended to a file and
// fdatasync'd, grouped). Both on core 1 where taskset exists, the load on core 0; rounds
// alternate between them. Prints each round's requests/s and CPU µs per request, and Warden's
// ratios to the peer (medians over the rounds).
//
//   npm run build && node bench/durable-peer.mjs [--rounds 5] [--duration 5] [--connections 32]
//     [--env EVALUATION_POOL_MIN_MS=60000]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { REFERENCE_4K_BODY, REFERENCE_POLICY } from './evaluation-cases.mjs'
import {
  benchArgs,
  cpuSeconds,
  create,
  envPairs,
  median,
  runPinned,
  START_FLAGS,
  startProcess,
  stop,
} from './lib.mjs'

const { opts, ROUNDS, DURATION, CONNECTIONS } = benchArgs(
  { rounds: '5' },
  { env: { type: 'string', multiple: true, default: [] } },
)
const KEY = `wdn_bench_${'p'.repeat(32)}`

const hit = (port, path, headers) =>
  new Promise((resolve, reject) =>
    autocannon(
      {
        url: `http://127.0.0.1:${port}${path}`,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: REFERENCE_4K_BODY,
        connections: CONNECTIONS,
        duration: DURATION,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    ),
  )

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'warden-peer-'))
  const servers = []
  try {
    const warden = await startProcess([...START_FLAGS, 'bin/warden.js', 'serve'], {
      DATABASE_URL: `sqlite:${join(dir, 'warden.db')}`,
      WARDEN_ADMIN_KEY: KEY,
      RATE_LIMIT_PER_MINUTE: '100000000',
      LOG_LEVEL: 'warn',
      ...envPairs(opts.env),
    })
    servers.push(warden)
    await create(warden.port, KEY, '/v1/applications', { id: 'bench', name: 'Bench', description: '' })
    await create(warden.port, KEY, '/v1/applications/bench/policies', REFERENCE_POLICY)
    const peer = await startProcess(['bench/durable-peer-server.mjs'], { PEER_DIR: dir }, { readyPath: '/' })
    servers.push(peer)
    const cases = [
      {
        name: 'warden',
        server: warden,
        path: '/v1/applications/bench/evaluations',
        headers: { authorization: `Bearer ${KEY}` },
      },
      { name: 'peer', server: peer, path: '/evaluations', headers: {} },
    ]
    for (const c of cases) await hit(c.server.port, c.path, c.headers) // warm-up
    const rows = { warden: [], peer: [] }
    console.log(`# Reference evaluation against its durable-log peer ${new Date().toISOString()}`)
    console.log()
    console.log(
      `Command: \`node bench/durable-peer.mjs --rounds ${ROUNDS} --duration ${DURATION} --connections ${CONNECTIONS}${opts.env.map((e) => ` --env ${e}`).join('')}\` (Node ${process.versions.node})`,
    )
    console.log()
    console.log(
      '| round | Warden req/s | CPU µs/req | peer req/s | CPU µs/req | req/s ratio | CPU ratio (peer/Warden) |',
    )
    console.log('|---:|---:|---:|---:|---:|---:|---:|')
    for (let round = 1; round <= ROUNDS; round++) {
      for (const c of round % 2 ? cases : [...cases].reverse()) {
        const before = cpuSeconds(c.server.proc.pid)
        const result = await hit(c.server.port, c.path, c.headers)
        const bad = result.errors + result.timeouts + result.non2xx
        if (bad > 0) throw new Error(`${c.name}: ${bad} requests failed`)
        const rps = result.requests.average
        const cpuUs = ((cpuSeconds(c.server.proc.pid) - before) * 1e6) / result.requests.total
        rows[c.name].push({ rps, cpuUs })
      }
      const w = rows.warden.at(-1)
      const p = rows.peer.at(-1)
      console.log(
        `| ${round} | ${w.rps.toFixed(0)} | ${w.cpuUs.toFixed(0)} | ${p.rps.toFixed(0)} | ${p.cpuUs.toFixed(0)} | ${(w.rps / p.rps).toFixed(3)} | ${(p.cpuUs / w.cpuUs).toFixed(3)} |`,
      )
    }
    const ratio = median(rows.warden.map((w, i) => w.rps / rows.peer[i].rps))
    const cpu = median(rows.warden.map((w, i) => rows.peer[i].cpuUs / w.cpuUs))
    console.log()
    console.log(
      `Warden / peer: ${ratio.toFixed(3)}× the requests a second; the peer's CPU per request is ${cpu.toFixed(3)}× Warden's (medians of ${ROUNDS} rounds)`,
    )
  } finally {
    for (const s of servers) await stop(s)
    rmSync(dir, { recursive: true, force: true })
  }
}

runPinned(main)

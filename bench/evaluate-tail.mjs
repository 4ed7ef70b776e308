#!/usr/bin/env node
// Where the evaluation call's tail comes from: the reference evaluation (bench/evaluation-cases.mjs)
// at a steady, evenly spaced rate (open loop, bench/lib.mjs `steady`) for 10 s, while a prober
// asks GET /healthz every 5 ms over a connection of its own. The prober's latency is how long
// the event loop was held; an evaluation's latency beyond it is what the evaluation waited for
// (its log entry's commit, above all).
//
//   npm run build && node bench/evaluate-tail.mjs [--rate 1000] [--checkout DIR] [--dir /tmp]
//     [--env KEY=VALUE ...]
//
// --dir is where the store's file goes (a tmpfs such as /dev/shm takes the disk out); --checkout
// measures another build. Warden runs unpinned (on both cores, with this process), as a
// deployment would run it.
import { mkdtempSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { REFERENCE_MESSAGES, REFERENCE_POLICY } from './evaluation-cases.mjs'
import { envPairs, START_FLAGS, startProcess, steady } from './lib.mjs'

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '1000' },
    checkout: { type: 'string', default: '.' },
    dir: { type: 'string', default: tmpdir() },
    env: { type: 'string', multiple: true, default: [] },
  },
})
const RATE = Number(values.rate)
const key = `wdn_bench_${'t'.repeat(32)}`
const dir = mkdtempSync(join(values.dir, 'warden-tail-'))
const warden = await startProcess(
  [...START_FLAGS, join(resolve(values.checkout), 'bin/warden.js'), 'serve'],
  {
    DATABASE_URL: `sqlite:${join(dir, 'warden.db')}`,
    WARDEN_ADMIN_KEY: key,
    RATE_LIMIT_PER_MINUTE: '100000000',
    METRICS_PORT: '0',
    ...envPairs(values.env),
  },
  { core: null },
)
try {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` }
  const post = (path, body) =>
    fetch(`${warden.base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
  await post('/v1/applications', { id: 'ref', name: 'Reference', description: '' })
  await post('/v1/applications/ref/policies', REFERENCE_POLICY)
  const evaluation = {
    method: 'POST',
    path: '/v1/applications/ref/evaluations',
    headers,
    body: JSON.stringify({ messages: REFERENCE_MESSAGES }),
  }
  await steady({ port: warden.port, request: evaluation, rate: RATE, duration: 2 })
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const probes = []
  let probing = true
  const probe = async () => {
    while (probing) {
      const started = performance.now()
      await new Promise((done) => {
        const req = request({ host: '127.0.0.1', port: warden.port, path: '/healthz', agent }, (res) => {
          res.resume()
          res.on('end', done)
        })
        req.end()
      })
      probes.push(performance.now() - started)
      await new Promise((done) => setTimeout(done, 5))
    }
  }
  const prober = probe()
  const result = await steady({ port: warden.port, request: evaluation, rate: RATE, duration: 10 })
  probing = false
  await prober
  probes.sort((a, b) => a - b)
  const at = (q) => probes[Math.min(probes.length - 1, Math.floor(q * probes.length))].toFixed(2)
  console.log(
    `${values.checkout} at ${RATE} req/s, store in ${values.dir}${values.env.length ? `, ${values.env.join(' ')}` : ''}: evaluation p50 ${result.p50} ms, p99 ${result.p99} ms, slowest ${result.max} ms, ${result.errors} errors | /healthz p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, slowest ${at(1)} ms`,
  )
} finally {
  warden.proc.kill()
}

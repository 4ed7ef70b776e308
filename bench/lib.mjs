// What the benchmark scripts share: their common options, free ports, starting servers pinned to
// a core, load with autocannon and at a steady rate, a process's CPU time, and pinning the load generator itself.
import { execFileSync, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { Agent, request as httpRequest } from 'node:http'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'

/** The checkout these scripts belong to. */
export const root = new URL('..', import.meta.url).pathname

/**
 * `--rounds`, `--duration` and `--connections` (with this script's defaults) beside its own
 * options; answers the parsed values and the three as numbers.
 */
export function benchArgs({ rounds = '3', duration = '5', connections = '32' } = {}, options = {}) {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: rounds },
      duration: { type: 'string', default: duration },
      connections: { type: 'string', default: connections },
      ...options,
    },
  })
  return {
    opts: values,
    ROUNDS: Number(values.rounds),
    DURATION: Number(values.duration),
    CONNECTIONS: Number(values.connections),
  }
}

/** KEY=VALUE pairs as an environment object. */
export const envPairs = (pairs) =>
  Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=')
      if (at < 1) throw new Error(`--env takes KEY=VALUE, got "${pair}"`)
      return [pair.slice(0, at), pair.slice(at + 1)]
    }),
  )

export const hasTaskset = (() => {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** Answers that were not a 2xx, and requests that failed or timed out, of an autocannon result. */
export const errorsOf = (result) => result.errors + result.timeouts + result.non2xx

export function freePort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
}

/** The node flags of `npm start` in `checkout`, read from its package.json so the two never drift apart. */
export const startFlags = (checkout = root) =>
  JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')).scripts.start.match(/--[\w-]+=\S+/g) ?? []

export const START_FLAGS = startFlags()

/** Every server this run started, so that none outlives it (see `runPinned`). */
export const children = []

/**
 * Starts a server process, pinned to `core` where taskset exists, with PORT set to a free port
 * and no metrics listener unless `env` asks for one; resolves once `readyPath` answers below 500.
 */
export async function startProcess(args, env = {}, { readyPath = '/healthz', core = 1, cwd = root } = {}) {
  const port = await freePort()
  // `core: null` leaves the process unpinned.
  const pin = hasTaskset && core !== null
  const command = pin ? 'taskset' : process.execPath
  const argv = pin ? ['-c', String(core), process.execPath, ...args] : args
  const started = performance.now()
  const proc = spawn(command, argv, {
    cwd,
    env: { ...process.env, PORT: String(port), METRICS_PORT: '0', ...env },
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
  return { proc, port, base: `http://127.0.0.1:${port}`, startMs: performance.now() - started }
}

/** Sends SIGTERM to a started server and resolves once it has exited. */
export async function stop(server) {
  if (server.proc.exitCode !== null) return
  server.proc.kill('SIGTERM')
  await new Promise((resolve) => server.proc.once('exit', resolve))
}

/** autocannon against 127.0.0.1:`port`; `rate` (optional) caps the offered load in req/s. */
export function load({ port, requests, duration, connections, rate }) {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections,
        duration,
        requests,
        ...(rate ? { overallRate: rate } : {}),
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    )
  })
}

/**
 * An open-loop load at `rate` requests a second, evenly spaced, for `duration` seconds: request i
 * is sent at start + i / rate whatever the answers before it (over keep-alive connections, as many
 * as are in flight), and its latency counts from that intended time, so that a stall of the
 * server or of this generator is charged to every request it delayed. autocannon's rate is a
 * quota a second per connection, sent back to back from the start of each second: at "half the
 * peak rate" the server runs flat out with every connection queued for half of each second, which
 * measures a saturated server, not a half-loaded one.
 * Resolves with latency quantiles in ms and counts.
 */
export async function steady({ port, request: { method, path, headers = {}, body }, rate, duration }) {
  const agent = new Agent({ keepAlive: true, maxSockets: 512 })
  const payload = body === undefined ? undefined : Buffer.from(body)
  const send = () =>
    new Promise((resolve) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          path,
          method,
          agent,
          headers: { ...headers, ...(payload ? { 'content-length': payload.length } : {}) },
        },
        (res) => {
          res.resume()
          res.on('end', () => resolve(res.statusCode >= 200 && res.statusCode < 300))
          res.on('error', () => resolve(false))
        },
      )
      req.on('error', () => resolve(false))
      req.end(payload)
    })
  const total = Math.floor(rate * duration)
  const latencies = []
  let errors = 0
  const pending = []
  const start = performance.now()
  for (let i = 0; i < total; i++) {
    const intended = start + (i * 1000) / rate
    const wait = intended - performance.now()
    if (wait >= 1) await sleep(wait)
    pending.push(
      send().then((ok) => {
        if (!ok) errors++
        latencies.push(performance.now() - intended)
      }),
    )
  }
  await Promise.all(pending)
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]
  const round = (x) => Math.round(x * 100) / 100
  return { requests: total, errors, p50: round(at(0.5)), p99: round(at(0.99)), max: round(at(1) ?? 0) }
}

/** Clock ticks a second, the unit of the CPU times in /proc/<pid>/stat. */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    return 100
  }
})()

/** CPU seconds (user and system) a process has used so far, or NaN where /proc is missing. */
export function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
  } catch {
    return Number.NaN
  }
}

/**
 * Runs `main` as the load generator pinned to core 0 (this script again under taskset, once,
 * where taskset exists), and kills every server it started when it ends.
 */
export async function runPinned(main) {
  if (hasTaskset && !process.env.BENCH_PINNED) {
    const child = spawn('taskset', ['-c', '0', process.execPath, ...process.argv.slice(1)], {
      stdio: 'inherit',
      env: { ...process.env, BENCH_PINNED: '1' },
    })
    child.on('exit', (code) => process.exit(code ?? 1))
    return
  }
  await main().finally(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
  })
}

/** Creates a resource through Warden's API with `key` (an application, a policy); throws unless 201. */
export async function create(port, key, path, payload) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(payload),
  })
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`)
}

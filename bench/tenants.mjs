#!/usr/bin/env node
// Two tenants on one Warden (issue 27): can one slow or fail the other?
//
// The victim's workspace sends, at steady rates (lib.mjs `steady`), the reference evaluation
// (evaluation-cases.mjs: 4 KB, on the event loop), a judged evaluation (a custom rule; the judge
// answers it in 20 ms) and a 100 KB pii evaluation (distinct phone numbers: the evaluation pool).
// They run three times, in one run, against the same server:
//
//   1. alone;
//   2. while the attacker's workspace sends the 0.9 MiB reference conversation twice a second
//      (the reference evaluation's p99 growth against the budget of +5 ms);
//   3. while the attacker floods: 1 MiB of distinct phone numbers against 16 pii and 14 `[0-9]`
//      rules (seconds of work each, until the pool's timeout), evaluations whose custom rules the
//      judge never answers (hanging until JUDGE_TIMEOUT_MS), and valid drafts of 64 distinct
//      `\p{Greek}{1000}` patterns (a compile of seconds, once, on the event loop).
//
// Printed: the victim's p50 / p99 and errors in each run, and the p99's growth against the
// issue's goals (+100 ms and no error under the flood; +5 ms beside the 0.9 MiB evaluations);
// what the attacker got; the longest /healthz (the event loop's longest hold); and the compile
// estimate (src/rules/detectors/regex-cost.ts) against RE2's measured compile time.
//
//   npm run build && node bench/tenants.mjs
//   node bench/tenants.mjs --duration 20 --rate 100 --env EVALUATION_POOL_SIZE=1
//   node bench/tenants.mjs --checkout /tmp/before   # another build (its dist/, bin/ and models/)
//
// `--bodies` measures instead what one tenant's large bodies cost another (bench/README.md, "Two
// tenants: large bodies"): the victim sends the reference evaluation at `--rate`/s, alone, then
// while the attacker sends bursts of `--attackers` (40) 20 MiB bodies at once, each burst once
// the one before was answered: text evaluations in one run, chat completions carrying a 20 MiB
// image (against bench/upstream-double.mjs) in another, each on a fresh server. Printed: the
// victim's p50 / p99 alone and beside the attack, the server's resident set above idle (its peak
// during the attack, and 1.5 s after the last burst was answered), and what the attacker got.
// Several `--checkout`s run in turn, in one table:
//
//   node bench/tenants.mjs --bodies --checkout /tmp/before --checkout .
import { execFileSync, fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, createServer, request as httpRequest } from 'node:http'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import RE2 from 're2'
import { regexCompileMs } from '../dist/rules/detectors/regex-cost.js'
import { BIG_BODY, REFERENCE_BODY, REFERENCE_POLICY } from './evaluation-cases.mjs'
import {
  benchArgs,
  children,
  cpuSeconds,
  envPairs,
  root,
  sleep,
  startFlags,
  startProcess,
  steady,
} from './lib.mjs'

const { opts, DURATION } = benchArgs(
  { duration: '10' },
  {
    checkout: { type: 'string', multiple: true, default: [root] },
    env: { type: 'string', multiple: true, default: [] },
    rate: { type: 'string', default: '60' },
    cores: { type: 'string', default: '0-1' },
    bodies: { type: 'boolean', default: false },
    attackers: { type: 'string', default: '40' },
  },
)
const RATE = Number(opts.rate)

/** An OpenAI-compatible judge that answers in 20 ms, except questions that say `hostile`: never. */
async function startJudge() {
  const held = new Set()
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c) => {
      body += c
    })
    req.on('end', () => {
      if (body.includes('hostile')) {
        held.add(res)
        res.on('close', () => held.delete(res))
        return
      }
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: '{"score": 0.9, "reason": "on topic"}' },
                finish_reason: 'stop',
              },
            ],
          }),
        )
      }, 20)
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    close: () => {
      for (const res of held) res.destroy()
      server.closeAllConnections()
      return new Promise((resolve) => server.close(resolve))
    },
  }
}

/** `characters` characters of distinct phone numbers: pii's most costly text per character. */
function phoneText(characters, seed = 7) {
  let text = ''
  for (let i = seed; text.length < characters; i++)
    text += `call +1 212 ${String(200 + (i % 700)).padStart(3, '0')} ${String(i % 10_000).padStart(4, '0')} `
  return text.slice(0, characters)
}

/**
 * Sends `make()`'s requests one after another from `connections` clients until `until()`, then
 * hangs up on those still waiting; counts the statuses of those answered.
 */
async function flood(base, key, path, make, connections, until) {
  const statuses = {}
  const gone = new AbortController()
  const client = async () => {
    while (!until()) {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: make(),
        signal: gone.signal,
      }).then(
        async (r) => {
          await r.arrayBuffer()
          return r.status
        },
        () => (gone.signal.aborted ? 'unanswered when the run ended' : 'failed'),
      )
      statuses[res] = (statuses[res] ?? 0) + 1
    }
  }
  const clients = Promise.all(Array.from({ length: connections }, client))
  while (!until()) await sleep(50)
  gone.abort()
  await clients
  return statuses
}

/**
 * /healthz one after another until `until()`: the slowest answer is the event loop's longest hold
 * (at most). A probe that fails (an overwhelmed server resets connections) counts its time too.
 */
async function probe(base, until) {
  const times = []
  let failed = 0
  while (!until()) {
    const started = performance.now()
    await fetch(`${base}/healthz`).then(
      (r) => r.arrayBuffer(),
      () => failed++,
    )
    times.push(performance.now() - started)
    await sleep(5)
  }
  times.sort((a, b) => a - b)
  const round = (x) => Math.round(x * 10) / 10
  return { p99: round(times[Math.floor(times.length * 0.99)] ?? 0), max: round(times.at(-1) ?? 0), failed }
}

async function main() {
  const checkout = opts.checkout.at(-1)
  if (!existsSync(join(checkout, 'dist', 'warden.mjs')))
    throw new Error(`run \`npm run build\` in ${checkout} first`)
  const command = `node bench/tenants.mjs ${process.argv.slice(2).join(' ')}`.trim()
  const loadBefore = loadavg()
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-tenants-'))
  const database = `sqlite:${join(dir, 'bench.db')}`
  const judge = await startJudge()
  // The attacker's workspace and key, made with the operator's command before the server starts.
  const cli = (...args) =>
    execFileSync(process.execPath, ['bin/warden.js', ...args], {
      cwd: checkout,
      env: { ...process.env, DATABASE_URL: database },
      encoding: 'utf8',
    })
  cli('workspaces', 'create', 'attacker')
  const attackerKey = cli('keys', 'create', '--workspace', 'attacker', '--scopes', 'admin')
    .trim()
    .split('\n')
    .at(-1)
  const victimKey = `bench-admin-${randomBytes(16).toString('hex')}`
  const warden = await startProcess(
    [...startFlags(checkout), 'bin/warden.js', 'serve'],
    {
      DATABASE_URL: database,
      WARDEN_ADMIN_KEY: victimKey,
      RATE_LIMIT_PER_MINUTE: '100000000',
      JUDGE_BASE_URL: judge.url,
      JUDGE_MODEL: 'judge',
      JUDGE_TIMEOUT_MS: '5000',
      ...envPairs(opts.env),
    },
    { core: opts.cores, cwd: checkout },
  )
  const { base, port } = warden
  const post = async (key, path, payload) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: typeof payload === 'string' ? payload : JSON.stringify(payload),
    })
    return { status: res.status, body: await res.text() }
  }
  for (const key of [victimKey, attackerKey]) {
    const app = await post(key, '/v1/applications', { id: 'bot', name: 'Bot', description: '' })
    const policy = await post(key, '/v1/applications/bot/policies', REFERENCE_POLICY)
    if (app.status !== 201 || policy.status !== 201) throw new Error(`setup: ${app.body} ${policy.body}`)
  }

  const path = '/v1/applications/bot/evaluations'
  const auth = (key) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' })
  const judgedBody = JSON.stringify({
    messages: [{ role: 'user', content: 'Where is my order 1042?' }],
    policies: [],
    draft_policies: [
      { id: 'topic', rules: [{ type: 'custom' }], target: ['input'], definition: 'On topic.' },
    ],
  })
  const pooledBody = JSON.stringify({
    messages: [{ role: 'user', content: phoneText(100_000) }],
    policies: [],
    draft_policies: [{ id: 'pii', rules: [{ type: 'pii' }], target: ['input'] }],
  })
  const victim = [
    { name: 'reference evaluation (4 KB, event loop)', body: REFERENCE_BODY, rate: RATE },
    { name: 'judged evaluation (custom rule, judge 20 ms)', body: judgedBody, rate: 5 },
    { name: '100 KB pii evaluation (evaluation pool)', body: pooledBody, rate: 2 },
  ]
  for (const v of victim) {
    const r = await post(victimKey, path, v.body)
    if (r.status !== 200) throw new Error(`${v.name}: ${r.status} ${r.body}`)
  }
  // Let the pool's workers finish starting (each loads the offline models).
  await sleep(1500)
  const measure = () =>
    Promise.all(
      victim.map((v) =>
        steady({
          port,
          request: { method: 'POST', path, headers: auth(victimKey), body: v.body },
          rate: v.rate,
          duration: DURATION,
        }),
      ),
    )
  /** The victim's runs while `attack` runs, and the event loop's longest hold meanwhile. */
  const during = async (attack) => {
    let over = false
    const until = () => over
    const attacking = attack(until)
    const holding = probe(base, until)
    const runs = await measure()
    over = true
    return { runs, attacker: await attacking, hold: await holding }
  }

  const alone = await during(async () => ({}))
  // 2. The 0.9 MiB reference conversation from the other workspace, twice a second.
  const big = await during(async () => {
    const r = await steady({
      port,
      request: { method: 'POST', path, headers: auth(attackerKey), body: BIG_BODY },
      rate: 2,
      duration: DURATION,
    })
    return { [`${r.requests - r.errors}× 200`]: 1, errors: r.errors }
  })
  // 3. The flood. Each heavy evaluation and each draft differs, so that no cache helps the attacker.
  let n = 0
  const heavyBody = () =>
    JSON.stringify({
      messages: [{ role: 'user', content: phoneText(1_000_000, ++n * 10_000) }],
      policies: [],
      draft_policies: [
        {
          id: 'flood',
          rules: [
            ...Array.from({ length: 16 }, () => ({ type: 'pii' })),
            ...Array.from({ length: 14 }, () => ({ type: 'regex', value: '[0-9]' })),
          ],
          target: ['input'],
        },
      ],
    })
  const hangingBody = () =>
    JSON.stringify({
      messages: [{ role: 'user', content: `hostile ${++n}` }],
      policies: [],
      draft_policies: [{ id: 'h', rules: [{ type: 'custom' }], target: ['input'], definition: 'Anything.' }],
    })
  const patternsBody = () => {
    const round = ++n
    return JSON.stringify({
      messages: [{ role: 'user', content: 'hello' }],
      policies: [],
      draft_policies: [
        {
          id: 'p',
          rules: Array.from({ length: 64 }, (_, i) => ({
            type: 'regex',
            value: `\\p{Greek}{1000}c${round}x${i}`,
          })),
          target: ['input'],
        },
      ],
    })
  }
  const flooded = await during(async (until) => {
    const [heavy, hanging, patterns] = await Promise.all([
      flood(base, attackerKey, path, heavyBody, 4, until),
      flood(base, attackerKey, path, hangingBody, 64, until),
      flood(base, attackerKey, path, patternsBody, 2, until),
    ])
    return { heavy, hanging, patterns }
  })

  warden.proc.kill('SIGTERM')
  await new Promise((resolve) => warden.proc.once('exit', resolve))
  await judge.close()
  rmSync(dir, { recursive: true, force: true })

  // The compile estimate against RE2's own time, for a few patterns (best of 3 compiles each).
  const calibration = [
    'order [0-9]+',
    '\\b(?:secret|token|password)\\s*[:=]\\s*\\S+',
    '.{1000}',
    '\\p{Greek}{1000}c1',
    '[\\p{L}\\p{N}]{50}',
    '\\p{L}{200}',
  ].map((pattern) => {
    let best = Number.POSITIVE_INFINITY
    for (let i = 0; i < 3; i++) {
      const started = performance.now()
      new RE2(`${pattern}(?:z${i})?`, 'gu')
      best = Math.min(best, performance.now() - started)
    }
    return { pattern, estimate: regexCompileMs(pattern), measured: best }
  })

  const loadAfter = loadavg()
  const ms = (x) => (Math.round(x * 10) / 10).toLocaleString('en-US')
  const row = (name, a, b) =>
    `| ${name} | ${ms(a.p50)} / ${ms(a.p99)} | ${a.errors} | ${ms(b.p50)} / ${ms(b.p99)} | ${b.errors} | ${b.p99 - a.p99 >= 0 ? '+' : ''}${ms(b.p99 - a.p99)} |`
  const statuses = (s) =>
    Object.entries(s)
      .map(([k, v]) => `${v}× ${k}`)
      .join(', ') || 'none'
  const refGrowth = big.runs[0].p99 - alone.runs[0].p99
  const worstGrowth = Math.max(...flooded.runs.map((r, i) => r.p99 - alone.runs[i].p99))
  const floodErrors = flooded.runs.reduce((a, r) => a + r.errors, 0)
  const md = [
    `# Warden two-tenant benchmark ${new Date().toISOString()}`,
    '',
    `Command: \`${command}\` (checkout ${checkout}; env ${opts.env.join(' ') || 'default'}); Warden on cores ${opts.cores}, ${DURATION} s a run; load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadAfter.map((l) => l.toFixed(2)).join(' ')}.`,
    '',
    `The victim's requests, each series at its own steady rate (reference ${RATE}/s, judged 5/s, pooled 2/s):`,
    '',
    '| victim’s request | alone p50 / p99 ms | errors | beside 0.9 MiB × 2/s: p50 / p99 ms | errors | p99 growth ms |',
    '|---|---:|---:|---:|---:|---:|',
    ...victim.map((v, i) => row(v.name, alone.runs[i], big.runs[i])),
    '',
    '| victim’s request | alone p50 / p99 ms | errors | under the flood: p50 / p99 ms | errors | p99 growth ms |',
    '|---|---:|---:|---:|---:|---:|',
    ...victim.map((v, i) => row(v.name, alone.runs[i], flooded.runs[i])),
    '',
    `Goals: the reference evaluation's p99 beside the 0.9 MiB evaluations within +5 ms: ${ms(refGrowth)} ms, ${refGrowth <= 5 ? 'met' : 'not met'}. Under the flood, every victim p99 within +100 ms and no error: worst growth ${ms(worstGrowth)} ms, ${floodErrors} errors, ${worstGrowth <= 100 && floodErrors === 0 ? 'met' : 'not met'}.`,
    '',
    `What the attacker got under the flood: 1 MiB heavy evaluations ${statuses(flooded.attacker.heavy)}; judged evaluations against the hanging judge ${statuses(flooded.attacker.hanging)}; drafts of 64 costly patterns ${statuses(flooded.attacker.patterns)}. Beside: the 0.9 MiB evaluations ${big.attacker.errors} errors.`,
    '',
    `Longest /healthz (the event loop's longest hold, at most): alone ${ms(alone.hold.max)} ms (p99 ${ms(alone.hold.p99)}); beside the 0.9 MiB evaluations ${ms(big.hold.max)} ms (p99 ${ms(big.hold.p99)}); under the flood ${ms(flooded.hold.max)} ms (p99 ${ms(flooded.hold.p99)}).`,
    '',
    'The compile estimate against RE2 (best of three compiles, this process):',
    '',
    '| pattern | estimate ms | measured ms |',
    '|---|---:|---:|',
    ...calibration.map(
      (c) => `| \`${c.pattern.replace(/\|/g, '\\|')}\` | ${ms(c.estimate)} | ${ms(c.measured)} |`,
    ),
    '',
  ].join('\n')
  console.log(`\n${md}`)
  mkdirSync(join(root, 'bench', 'results'), { recursive: true })
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  writeFileSync(join(root, 'bench', 'results', `${stamp}-tenants.md`), `${md}\n`)
  console.log(`written: bench/results/${stamp}-tenants.md`)
}

/** CPU seconds the whole machine has spent busy so far (every core), from /proc/stat. */
function machineBusySeconds() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  // user nice system idle iowait irq softirq steal: all but idle and iowait.
  const [user, nice, system, , , irq, softirq, steal] = fields
  return (user + nice + system + irq + softirq + steal) / 100
}

/** The resident set of a process in MB, from /proc. */
const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024

const MiB = 1_048_576
/** The largest body the routes take by default, less room for the JSON around the payload. */
const BODY_BYTES = 20 * MiB - 256

/** The attacker's body: a text evaluation of 20 MiB of prose against no policy (parsed, evaluated and logged), or a chat completion whose user turn carries a 20 MiB image, as OpenAI's SDKs send one. */
function attackBody(attack) {
  const message =
    attack === 'text'
      ? {
          role: 'user',
          content: 'Where is my order? It was due last week and nothing has arrived yet. '.repeat(
            Math.floor(BODY_BYTES / 70),
          ),
        }
      : {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            {
              type: 'image_url',
              image_url: { url: `data:image/png;base64,${'A'.repeat(BODY_BYTES - 200)}` },
            },
          ],
        }
  return Buffer.from(
    JSON.stringify(attack === 'text' ? { messages: [message], policies: [] } : { messages: [message] }),
  )
}

/**
 * Bursts of `size` requests sent at once, each burst as soon as the one before was answered
 * whole, until `stop()`, which resolves once the burst under way is answered too. Counts the
 * statuses and the bursts.
 */
function bodyBursts({ port, key, path, body, size }) {
  const agent = new Agent({ keepAlive: true, maxSockets: size })
  const statuses = {}
  let bursts = 0
  let stopped = false
  const send = () =>
    new Promise((resolve) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          agent,
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            'content-length': body.length,
          },
        },
        (res) => {
          res.resume()
          res.on('end', () => resolve(res.statusCode))
          res.on('error', () => resolve('failed'))
        },
      )
      // A socket the server closes while a refused body is still being sent fails its writes.
      req.on('socket', (socket) => {
        if (!socket.benchGuarded) {
          socket.benchGuarded = true
          socket.on('error', () => {})
        }
      })
      req.on('error', () => resolve('failed'))
      req.end(body)
    })
  const running = (async () => {
    while (!stopped) {
      for (const status of await Promise.all(Array.from({ length: size }, send)))
        statuses[status] = (statuses[status] ?? 0) + 1
      bursts++
    }
  })()
  return {
    statuses,
    bursts: () => bursts,
    async stop() {
      stopped = true
      await running
      agent.destroy()
    },
  }
}

/**
 * One server of `checkout`, one attack: the victim alone, then beside `attack` (text or image);
 * the resident set sampled every 20 ms.
 */
async function bodiesRun(checkout, attack, upstream) {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-bodies-'))
  const database = `sqlite:${join(dir, 'bench.db')}`
  const cli = (...args) =>
    execFileSync(process.execPath, ['bin/warden.js', ...args], {
      cwd: checkout,
      env: { ...process.env, DATABASE_URL: database },
      encoding: 'utf8',
    })
  cli('workspaces', 'create', 'attacker')
  const attackerKey = cli('keys', 'create', '--workspace', 'attacker', '--scopes', 'admin')
    .trim()
    .split('\n')
    .at(-1)
  const victimKey = `bench-admin-${randomBytes(16).toString('hex')}`
  const warden = await startProcess(
    [...startFlags(checkout), 'bin/warden.js', 'serve'],
    {
      DATABASE_URL: database,
      WARDEN_ADMIN_KEY: victimKey,
      RATE_LIMIT_PER_MINUTE: '100000000',
      PROVIDER_BENCH_BASE_URL: `http://127.0.0.1:${upstream.port}/v1`,
      ...envPairs(opts.env),
    },
    { core: opts.cores, cwd: checkout },
  )
  const { port } = warden
  const auth = (key) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' })
  const post = async (key, path, payload) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: 'POST',
      headers: auth(key),
      body: typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload),
    })
    return { status: res.status, body: await res.text() }
  }
  const setup = [
    await post(victimKey, '/v1/applications', { id: 'bot', name: 'Bot', description: '' }),
    await post(victimKey, '/v1/applications/bot/policies', REFERENCE_POLICY),
    await post(attackerKey, '/v1/applications', {
      id: 'bot',
      name: 'Bot',
      description: '',
      provider: 'bench',
      model: 'bench-model',
    }),
  ]
  if (setup.some((r) => r.status !== 201)) throw new Error(`setup: ${setup.map((r) => r.body).join(' ')}`)
  const path = '/v1/applications/bot/evaluations'
  const attackPath = attack === 'text' ? path : '/v1/applications/bot/chat/completions'
  const body = attackBody(attack)
  // One of each, answered, before anything is measured (schemas compile on first use).
  for (const [key, where, payload] of [
    [victimKey, path, REFERENCE_BODY],
    [attackerKey, attackPath, body],
  ]) {
    const r = await post(key, where, payload)
    if (r.status !== 200) throw new Error(`warm-up: ${r.status} ${r.body.slice(0, 300)}`)
  }
  await sleep(1500)
  const victim = () =>
    steady({
      port,
      request: { method: 'POST', path, headers: auth(victimKey), body: REFERENCE_BODY },
      rate: RATE,
      duration: DURATION,
    })
  /** The victim's run, and meanwhile /healthz one after another: the event loop's holds. */
  const timed = async () => {
    let over = false
    const holding = probe(`http://127.0.0.1:${port}`, () => over)
    const run = await victim()
    over = true
    return { run, hold: await holding }
  }
  const alone = await timed()
  await sleep(1000)
  const idle = rssMb(warden.proc.pid)
  let peak = idle
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(warden.proc.pid))
  }, 20)
  // The attacker sends from a process of its own: pushing 40 × 20 MiB into sockets would stall
  // the event loop that times the victim's requests.
  const attacker = fork(new URL(import.meta.url).pathname, [], {
    env: {
      ...process.env,
      BENCH_ATTACKER: JSON.stringify({
        port,
        key: attackerKey,
        path: attackPath,
        attack,
        size: Number(opts.attackers),
      }),
    },
  })
  children.push(attacker)
  await new Promise((resolve) => attacker.once('message', resolve))
  const cpuBefore = [cpuSeconds(warden.proc.pid), cpuSeconds(attacker.pid), machineBusySeconds()]
  const started = performance.now()
  const beside = await timed()
  const cpu = [cpuSeconds(warden.proc.pid), cpuSeconds(attacker.pid), machineBusySeconds()].map(
    (after, i) => after - (cpuBefore[i] ?? 0),
  )
  const seconds = (performance.now() - started) / 1000
  attacker.send('stop')
  const flood = await new Promise((resolve) => attacker.once('message', resolve))
  clearInterval(sampler)
  await sleep(1500)
  const after = rssMb(warden.proc.pid)
  warden.proc.kill('SIGTERM')
  await new Promise((resolve) => warden.proc.once('exit', resolve))
  rmSync(dir, { recursive: true, force: true })
  return { alone, beside, idle, peak, after, attacker: flood.statuses, bursts: flood.bursts, cpu, seconds }
}

async function bodiesMain() {
  for (const checkout of opts.checkout)
    if (!existsSync(join(checkout, 'dist', 'warden.mjs')))
      throw new Error(`run \`npm run build\` in ${checkout} first`)
  const command = `node bench/tenants.mjs ${process.argv.slice(2).join(' ')}`.trim()
  const loadBefore = loadavg()
  const upstream = await startProcess(['bench/upstream-double.mjs'], {}, { readyPath: '/', core: null })
  const rows = []
  for (const attack of ['text', 'image'])
    for (const checkout of opts.checkout) {
      const label = resolve(checkout) === resolve(root) ? 'this build' : checkout
      process.stdout.write(`${label}, ${attack}…\n`)
      rows.push({ label, attack, ...(await bodiesRun(checkout, attack, upstream)) })
    }
  upstream.proc.kill('SIGTERM')
  const loadAfter = loadavg()
  const ms = (x) => (Math.round(x * 10) / 10).toLocaleString('en-US')
  const mb = (x) => Math.round(x).toLocaleString('en-US')
  const statuses = (s) =>
    Object.entries(s)
      .map(([k, v]) => `${v}× ${k}`)
      .join(', ') || 'none'
  const kinds = {
    text: '20 MiB text evaluations',
    image: '20 MiB image chat completions',
  }
  const md = [
    `# Warden two-tenant benchmark, large bodies ${new Date().toISOString()}`,
    '',
    `Command: \`${command}\` (env ${opts.env.join(' ') || 'default'}); Warden on cores ${opts.cores}, ${DURATION} s a run; load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadAfter.map((l) => l.toFixed(2)).join(' ')}.`,
    '',
    `The victim sends the reference evaluation (4 KB) at ${RATE}/s, alone and then while the attacker sends bursts of ${opts.attackers} bodies at once, each burst once the one before was answered (the last one answered before the run ends). Goals: the victim's p99 within +50 ms, the resident set under 1 GB (1,024 MB) above idle.`,
    '',
    '| build | attacker sends | victim alone p50 / p99 ms | beside the attack p50 / p99 ms | p99 growth ms | victim errors | /healthz p99 / max ms, alone → beside | RSS idle MB | peak above idle MB | 1.5 s after the last answer, above idle MB | CPU s during the attack: Warden / attacker / whole machine, in s | what the attacker got |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.label} | ${kinds[r.attack]} | ${ms(r.alone.run.p50)} / ${ms(r.alone.run.p99)} | ${ms(r.beside.run.p50)} / ${ms(r.beside.run.p99)} | ${r.beside.run.p99 - r.alone.run.p99 >= 0 ? '+' : ''}${ms(r.beside.run.p99 - r.alone.run.p99)} | ${r.alone.run.errors} / ${r.beside.run.errors} | ${ms(r.alone.hold.p99)} / ${ms(r.alone.hold.max)} → ${ms(r.beside.hold.p99)} / ${ms(r.beside.hold.max)} | ${mb(r.idle)} | ${mb(r.peak - r.idle)} | ${mb(r.after - r.idle)} | ${r.cpu.map((c) => c.toFixed(1)).join(' / ')} in ${r.seconds.toFixed(1)} | ${r.bursts} bursts: ${statuses(r.attacker)} |`,
    ),
    '',
  ].join('\n')
  console.log(`\n${md}`)
  mkdirSync(join(root, 'bench', 'results'), { recursive: true })
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  writeFileSync(join(root, 'bench', 'results', `${stamp}-tenants-bodies.md`), `${md}\n`)
  console.log(`written: bench/results/${stamp}-tenants-bodies.md`)
}

/** The attacker's process (bodiesRun): bursts until the parent says stop, then their count and statuses. */
async function attackerChild({ port, key, path, attack, size }) {
  const flood = bodyBursts({ port, key, path, body: attackBody(attack), size })
  process.send('started')
  await new Promise((resolve) => process.once('message', resolve))
  await flood.stop()
  process.send({ statuses: flood.statuses, bursts: flood.bursts() }, () => process.exit(0))
}

if (process.env.BENCH_ATTACKER) await attackerChild(JSON.parse(process.env.BENCH_ATTACKER))
else
  await (opts.bodies ? bodiesMain() : main()).finally(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
  })

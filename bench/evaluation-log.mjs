#!/usr/bin/env node
// What the evaluation log costs, in one run:
//
// 1. Listing at scale: the newest page, filtered pages and a read by id, on a store whose log
//    holds a few pages (--small) against one seeded with ten million entries (--large), as
//    paired rounds: each round on the large store right after one on the small store, the
//    ratio of the two per pair, the median of the ratios (this machine drifts by tens of percent
//    within minutes; a pair is seconds apart).
// 2. The evaluation call with logging on (this checkout) against the same build with the log
//    write taken out (--off, a checkout of it), each on a fresh store, paired the same way.
//
//   node bench/seed.mjs --sqlite-file /tmp/log-small.db --applications 0 --policies 0 --evaluations 1000
//   node bench/seed.mjs --sqlite-file /tmp/log-10m.db --applications 0 --policies 0 --evaluations 10000000
//   node bench/evaluation-log.mjs --small /tmp/log-small.db --large /tmp/log-10m.db --off /tmp/warden-no-log
//
// 3. With --retention FILE (a seeded SQLite store, which it changes): Warden started with a
//    retention one day shorter than the log deletes the oldest day in the background while
//    clients read the newest page; the reads' p99 during the deletes, and after.
//
// --small and --large take a SQLite file or a DATABASE_URL (postgres://…). The log is the one
// bench/seed.mjs writes, of application `log-bench` in workspace `default`. Where taskset
// exists, the load generator runs on core 0 and the servers on core 1.
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import SQLite from 'better-sqlite3'
import {
  benchArgs,
  cpuSeconds,
  errorsOf,
  hasTaskset,
  load as loadOn,
  median,
  root,
  runPinned,
  START_FLAGS,
  startProcess,
  stop,
} from './lib.mjs'

const { opts, ROUNDS, DURATION, CONNECTIONS } = benchArgs(
  { rounds: '5', duration: '3' },
  {
    small: { type: 'string' },
    large: { type: 'string' },
    off: { type: 'string' },
    label: { type: 'string', default: '' },
    // A SQLite store whose oldest day retention then deletes, under load (it changes the store).
    retention: { type: 'string' },
  },
)
const databaseUrl = (store) => (/^(sqlite|postgres(ql)?):/.test(store) ? store : `sqlite:${resolve(store)}`)
const ADMIN = `bench-admin-${randomBytes(16).toString('hex')}`
const auth = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }

/** `warden serve` of the checkout at `checkout`, pinned to core 1, on `url`. */
const startWarden = (checkout, url, env = {}) =>
  startProcess(
    [...START_FLAGS, join(checkout, 'bin/warden.js'), 'serve'],
    {
      DATABASE_URL: url,
      WARDEN_ADMIN_KEY: ADMIN,
      // Rate limiting stays on, with a limit no run reaches.
      RATE_LIMIT_PER_MINUTE: '100000000',
      LOG_LEVEL: 'warn',
      ...env,
    },
    { cwd: checkout },
  )

const load = (port, requests, duration = DURATION) =>
  loadOn({ port, requests, duration, connections: CONNECTIONS })

/** One round: requests a second, p99, the server's CPU per request and the answers that were not 2xx. */
async function round(server, requests) {
  const before = cpuSeconds(server.proc.pid)
  const r = await load(server.port, requests)
  const cpuUs = ((cpuSeconds(server.proc.pid) - before) * 1e6) / r.requests.total
  return { rps: r.requests.average, p99: r.latency.p99, cpuUs, errors: errorsOf(r) }
}

/** Paired rounds of `requests` on servers a then b; the median of the b/a ratios. */
async function paired(a, b, requestsA, requestsB = requestsA) {
  await load(a.port, requestsA, 1)
  await load(b.port, requestsB, 1)
  const pairs = []
  for (let i = 0; i < ROUNDS; i++) {
    const first = await round(a, requestsA)
    const second = await round(b, requestsB)
    pairs.push({ a: first, b: second, ratio: second.rps / first.rps })
  }
  const ratios = pairs.map((p) => p.ratio)
  return {
    aRps: median(pairs.map((p) => p.a.rps)),
    bRps: median(pairs.map((p) => p.b.rps)),
    aP99: median(pairs.map((p) => p.a.p99)),
    bP99: median(pairs.map((p) => p.b.p99)),
    aCpuUs: median(pairs.map((p) => p.a.cpuUs)),
    bCpuUs: median(pairs.map((p) => p.b.cpuUs)),
    ratio: median(ratios),
    ratioMin: Math.min(...ratios),
    ratioMax: Math.max(...ratios),
    errors: pairs.reduce((n, p) => n + p.a.errors + p.b.errors, 0),
  }
}

const get = (path) => [{ method: 'GET', path, headers: auth }]
async function main() {
  const results = { listing: [], evaluation: null }

  if (opts.small && opts.large) {
    const small = await startWarden(root, databaseUrl(opts.small))
    const large = await startWarden(root, databaseUrl(opts.large))
    const log = '/v1/applications/log-bench/evaluations'
    const newest = async (server) =>
      (await (await fetch(`${server.base}${log}?limit=1`, { headers: auth })).json()).data[0]
    const [smallNewest, largeNewest] = [await newest(small), await newest(large)]
    // A window of three days, a day back from the newest entry: full pages on both stores.
    const window = (entry) => `since=${entry.created - 4 * 86_400}&until=${entry.created - 86_400}`
    const cases = [
      ['newest page (50)', '?limit=50'],
      ['verdict=fail', '?limit=50&verdict=fail'],
      ['policy_id=tone', '?limit=50&policy_id=tone'],
      ['policy_id=tone & verdict=fail', '?limit=50&policy_id=tone&verdict=fail'],
      ['since & until (3 days)', (entry) => `?limit=50&${window(entry)}`],
      ['get one by id', (entry) => `/${entry.id}`],
    ]
    for (const [name, query] of cases) {
      const path = (entry) => `${log}${typeof query === 'function' ? query(entry) : query}`
      for (const [server, entry] of [
        [small, smallNewest],
        [large, largeNewest],
      ]) {
        const page = await (await fetch(`${server.base}${path(entry)}`, { headers: auth })).json()
        if (page.data && page.data.length < 50)
          throw new Error(`${name}: a page of ${page.data.length} on ${server.base}`)
      }
      const r = await paired(small, large, get(path(smallNewest)), get(path(largeNewest)))
      results.listing.push({ case: name, ...r })
      console.error(
        `${name}: small ${Math.round(r.aRps)} req/s, large ${Math.round(r.bRps)} req/s, large/small ${r.ratio.toFixed(2)}`,
      )
    }
    await stop(small)
    await stop(large)
  }

  if (opts.off) {
    const dir = mkdtempSync(join(tmpdir(), 'warden-log-bench-'))
    const on = await startWarden(root, `sqlite:${join(dir, 'on.db')}`)
    const off = await startWarden(resolve(opts.off), `sqlite:${join(dir, 'off.db')}`)
    const conversation = JSON.stringify({
      messages: [
        { role: 'system', content: 'You are a helpful support agent for an online shop.' },
        {
          role: 'user',
          content: 'My card is 4111 1111 1111 1111 and my mail is jo@example.com: where is order 1042?',
        },
        { role: 'assistant', content: 'Your order 1042 left our warehouse yesterday and arrives on Friday.' },
      ],
    })
    for (const server of [on, off]) {
      await fetch(`${server.base}/v1/applications`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ id: 'bot', name: 'Bot', description: '' }),
      })
      // The reference policy of bench/evaluate.mjs: the four detector types over input and output.
      const res = await fetch(`${server.base}/v1/applications/bot/policies`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({
          id: 'reference',
          rules: [
            { type: 'pii' },
            { type: 'keywords', flagged: ['refund guarantee', 'lawsuit', 'chargeback'] },
            { type: 'regex', value: '\\b(?:password|secret|api[_-]?key)\\s*[:=]\\s*\\S+' },
            { type: 'length', value: '4000' },
          ],
          target: ['input', 'output'],
          override_response: 'Sorry, I cannot help with that here.',
        }),
      })
      if (res.status !== 201) throw new Error(`policy: ${res.status} ${await res.text()}`)
    }
    const evaluate = [
      { method: 'POST', path: '/v1/applications/bot/evaluations', headers: auth, body: conversation },
    ]
    const r = await paired(off, on, evaluate)
    const onStore = new SQLite(join(dir, 'on.db'), { readonly: true })
    const logged = onStore.prepare('select count(*) as n from evaluations').get().n
    onStore.close()
    results.evaluation = { ...r, logged }
    console.error(
      `evaluate: off ${Math.round(r.aRps)} req/s, on ${Math.round(r.bRps)} req/s, on/off ${r.ratio.toFixed(2)}; ${logged} entries logged`,
    )
    await stop(on)
    await stop(off)
    rmSync(dir, { recursive: true, force: true })
  }

  if (opts.retention) {
    // Retention one day shorter than the seeded log: start-up deletes its oldest day in the
    // background, 1,000 entries a transaction, while clients read the log; then the same reads
    // with retention idle.
    const file = resolve(opts.retention)
    const count = () => {
      const db = new SQLite(file, { readonly: true })
      try {
        return db.prepare('select count(*) as n from evaluations').get().n
      } finally {
        db.close()
      }
    }
    const before = count()
    const oldest = (() => {
      const db = new SQLite(file, { readonly: true })
      try {
        return db.prepare('select min(created) as c, max(created) as m from evaluations').get()
      } finally {
        db.close()
      }
    })()
    const days = Math.floor((Math.floor(Date.now() / 1000) - oldest.c) / 86_400) - 1
    const started = performance.now()
    const server = await startWarden(root, `sqlite:${file}`, { EVALUATION_RETENTION_DAYS: String(days) })
    const { port } = server
    const page = get('/v1/applications/log-bench/evaluations?limit=50')
    const during = []
    let left = before
    // Rounds of one second while entries are still going; the purge is done when the count stops.
    for (let last = -1; left !== last && during.length < 600; ) {
      last = left
      const r = await load(port, page, 1)
      during.push({ rps: r.requests.average, p99: r.latency.p99, max: r.latency.max })
      left = count()
    }
    const purgeSeconds = (performance.now() - started) / 1000
    const after = []
    for (let i = 0; i < 5; i++) {
      const r = await load(port, page, 1)
      after.push({ rps: r.requests.average, p99: r.latency.p99, max: r.latency.max })
    }
    await stop(server)
    results.retention = {
      retentionDays: days,
      deleted: before - left,
      purgeSeconds,
      during: {
        rps: median(during.map((r) => r.rps)),
        p99: median(during.map((r) => r.p99)),
        max: Math.max(...during.map((r) => r.max)),
      },
      after: {
        rps: median(after.map((r) => r.rps)),
        p99: median(after.map((r) => r.p99)),
        max: Math.max(...after.map((r) => r.max)),
      },
    }
    console.error(JSON.stringify(results.retention))
  }

  const pct = (x) => x.toFixed(2)
  const lines = []
  lines.push(
    `Rounds: ${ROUNDS} × ${DURATION} s, ${CONNECTIONS} connections${hasTaskset ? ', load on core 0, servers on core 1' : ''}.`,
    '',
  )
  if (results.listing.length > 0) {
    lines.push(
      `Listing: small = ${opts.small}, large = ${opts.large}`,
      '',
      '| case | small: req/s | large: req/s | large / small (median, spread) | p99 ms small / large | server CPU µs/req small / large | errors |',
      '|---|---:|---:|---:|---:|---:|---:|',
    )
    for (const r of results.listing)
      lines.push(
        `| ${r.case} | ${Math.round(r.aRps)} | ${Math.round(r.bRps)} | ${pct(r.ratio)} (${pct(r.ratioMin)}–${pct(r.ratioMax)}) | ${r.aP99} / ${r.bP99} | ${Math.round(r.aCpuUs)} / ${Math.round(r.bCpuUs)} | ${r.errors} |`,
      )
    lines.push('')
  }
  if (results.evaluation) {
    const r = results.evaluation
    lines.push(
      '| evaluation call (reference policy, 3 messages) | log off: req/s | log on: req/s | on / off (median, spread) | p99 ms off / on | server CPU µs/req off / on | errors | entries logged |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      `| POST …/evaluations | ${Math.round(r.aRps)} | ${Math.round(r.bRps)} | ${pct(r.ratio)} (${pct(r.ratioMin)}–${pct(r.ratioMax)}) | ${r.aP99} / ${r.bP99} | ${Math.round(r.aCpuUs)} / ${Math.round(r.bCpuUs)} | ${r.errors} | ${r.logged} |`,
      '',
    )
  }
  if (results.retention) {
    const r = results.retention
    lines.push(
      `Retention (EVALUATION_RETENTION_DAYS=${r.retentionDays} on ${opts.retention}): ${r.deleted} entries deleted at start-up, within ${r.purgeSeconds.toFixed(1)} s, while clients read the newest page.`,
      '',
      '| newest page (50), one-second rounds | req/s (median) | p99 ms (median) | slowest answer ms |',
      '|---|---:|---:|---:|',
      `| while retention deletes | ${Math.round(r.during.rps)} | ${r.during.p99} | ${r.during.max} |`,
      `| after | ${Math.round(r.after.rps)} | ${r.after.p99} | ${r.after.max} |`,
      '',
    )
  }
  const markdown = lines.join('\n')
  console.log(markdown)
  const stamp = new Date().toISOString().replaceAll(':', '-').replaceAll('.', '-')
  const name = `${stamp}-evaluation-log${opts.label ? `-${opts.label}` : ''}`
  mkdirSync(join(root, 'bench/results'), { recursive: true })
  writeFileSync(join(root, `bench/results/${name}.json`), `${JSON.stringify({ opts, results }, null, 2)}\n`)
  writeFileSync(join(root, `bench/results/${name}.md`), `${markdown}\n`)
}

await runPinned(main)

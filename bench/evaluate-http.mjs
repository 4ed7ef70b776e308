#!/usr/bin/env node
// The evaluation call over HTTP (POST /v1/applications/{id}/evaluations), measured in the same run
// as the bare node:http baseline (bench/baseline-server.mjs), the way bench/run.mjs measures:
//
// - the reference case: a 6-message conversation of about 4 KB holding an email, a phone number,
//   a card number and one keyword, against one policy of pii (all kinds), keywords (100 phrases),
//   two regex rules and a length rule over user, assistant and system. Requests/s as a ratio to the
//   baseline's (each round paired with a baseline round just before it), p99 at half the peak rate (evenly spaced, open loop: lib.mjs `steady`),
//   errors;
// - the reference conversation against the reference policy plus a policy of toxicity and
//   prompt_injection rules on the input, scored by the offline models: its ratio to the baseline
//   over the reference case's, round by round (the models may cost at most 10%);
// - a clean conversation of the same size under the same policy, with nothing to find (prose, a
//   few numbers, code), as most production text is: requests/s as a ratio to the baseline, paired
//   the same way;
// - the same policy over a conversation of about 0.9 MiB of text in 15 messages (the body limit is
//   1 MiB, and the JSON around the text must fit under it): MB/s of conversation text evaluated;
// - five judged rules (custom, factuality, relevance, toxicity, prompt_injection) against a judge
//   double on 127.0.0.1 that answers {"score":0.9,"reason":"ok"} after 50 ms: p50 latency of one
//   request at a time (each request's texts differ, so the judge cache never answers).
//
//   npm run build && node bench/evaluate-http.mjs
//   node bench/evaluate-http.mjs --rounds 5 --duration 10 --connections 32
//
// Where taskset exists, the load generator runs on core 0 and Warden and the baseline on core 1.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer as createHttpServer } from 'node:http'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { APP_BODY } from './bodies.mjs'
import {
  BIG_BODY,
  BIG_MESSAGES as bigMessages,
  CLEAN_BODY,
  CLEAN_MESSAGES as cleanMessages,
  PHRASES,
  REFERENCE_BODY,
  REFERENCE_MESSAGES as referenceMessages,
  REFERENCE_POLICY as referencePolicy,
  textBytes,
} from './evaluation-cases.mjs'
import {
  benchArgs,
  errorsOf,
  hasTaskset,
  load as loadOn,
  median,
  root,
  runPinned,
  START_FLAGS,
  startProcess,
  steady as steadyLoad,
} from './lib.mjs'

const { opts, ROUNDS, DURATION, CONNECTIONS } = benchArgs(
  {},
  {
    'judged-requests': { type: 'string', default: '40' },
    // Keeps Warden running, with these arguments given to its node (e.g. --cpu-prof), and puts the
    // reference case under load for --profile-seconds after its warm-up; nothing else is measured.
    profile: { type: 'string' },
    'profile-seconds': { type: 'string', default: '10' },
    // Which case --profile loads: `reference`, `clean` or `big` (the 0.9 MiB conversation, 2 connections).
    'profile-case': { type: 'string', default: 'reference' },
  },
)
const JUDGE_DELAY_MS = 50
const load = ({ duration = DURATION, connections = CONNECTIONS, ...rest }) =>
  loadOn({ duration, connections, ...rest })

/** A judge double: an OpenAI-compatible endpoint that answers a fixed score after 50 ms. */
function startJudge() {
  const content = JSON.stringify({ score: 0.9, reason: 'ok' })
  const answer = JSON.stringify({
    id: 'chatcmpl-judge',
    object: 'chat.completion',
    created: 1795316060,
    model: 'bench-judge',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
  })
  let calls = 0
  const server = createHttpServer((req, res) => {
    req.resume()
    req.on('end', () => {
      calls++
      setTimeout(() => {
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(answer),
        })
        res.end(answer)
      }, JUDGE_DELAY_MS)
    })
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, port: server.address().port, calls: () => calls })),
  )
}

const run = randomBytes(3).toString('hex')

/** Five judged rules in one policy; the conversation ends with the assistant's reply, with context. */
const judgedPolicy = {
  id: 'judged',
  rules: [
    { type: 'custom' },
    { type: 'factuality' },
    { type: 'relevance' },
    { type: 'toxicity' },
    { type: 'prompt_injection' },
  ],
  target: ['input', 'output'],
  definition: 'The reply stays on the customer’s order and never promises a refund amount.',
}
let judgedSeq = 0
const judgedBody = () => {
  const n = `${run}-${++judgedSeq}`
  return JSON.stringify({
    messages: [
      { role: 'user', content: `Where is my order ${n}? It was due on Monday.` },
      {
        role: 'assistant',
        content: `Your order ${n} left our warehouse this morning and arrives on Thursday.`,
      },
    ],
    context: [`Order ${n}: shipped this morning, estimated delivery Thursday.`],
  })
}

async function main() {
  if (!existsSync(join(root, 'dist', 'warden.mjs'))) throw new Error('run `npm run build` first')
  const command = `node bench/evaluate-http.mjs ${process.argv.slice(2).join(' ')}`.trim()
  const loadBefore = loadavg()
  console.log(
    `Warden evaluation benchmark: ${ROUNDS} rounds × ${DURATION} s, ${CONNECTIONS} connections, ${hasTaskset ? 'load on core 0, servers on core 1' : 'no taskset: unpinned'}; load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`,
  )
  const judge = await startJudge()
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-eval-'))
  const adminKey = `bench-admin-${randomBytes(16).toString('hex')}`
  const warden = await startProcess(
    [...(opts.profile ? opts.profile.split(' ') : []), ...START_FLAGS, 'bin/warden.js', 'serve'],
    {
      DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`,
      WARDEN_ADMIN_KEY: adminKey,
      RATE_LIMIT_PER_MINUTE: '100000000',
      JUDGE_BASE_URL: `http://127.0.0.1:${judge.port}/v1`,
      JUDGE_MODEL: 'bench-judge',
    },
  )
  const auth = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }
  const base = `http://127.0.0.1:${warden.port}`
  const post = async (path, body) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: auth, body })
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    return res.json()
  }
  await post('/v1/applications', JSON.stringify({ id: 'ref', name: 'Reference', description: '' }))
  await post('/v1/applications', JSON.stringify({ id: 'judged', name: 'Judged', description: '' }))
  await post('/v1/applications/ref/policies', JSON.stringify(referencePolicy))
  // The reference policy and the offline models on the input (issue 19: at most 10% slower).
  await post('/v1/applications', JSON.stringify({ id: 'models', name: 'Models', description: '' }))
  await post('/v1/applications/models/policies', JSON.stringify(referencePolicy))
  await post(
    '/v1/applications/models/policies',
    JSON.stringify({
      id: 'models',
      rules: [
        { type: 'toxicity', detector: 'model' },
        { type: 'prompt_injection', detector: 'model' },
      ],
      target: ['input'],
      override_response: 'Sorry, I cannot help with that.',
    }),
  )
  await post('/v1/applications/judged/policies', JSON.stringify(judgedPolicy))
  const refPath = '/v1/applications/ref/evaluations'
  const judgedPath = '/v1/applications/judged/evaluations'

  // One answer of each, checked, so that the figures measure what they claim to.
  const refAnswer = await post(refPath, REFERENCE_BODY)
  const kinds = refAnswer.policies[0].rules.flatMap((r) => r.findings.map((f) => f.kind ?? r.type))
  const cleanAnswer = await post(refPath, CLEAN_BODY)
  if (cleanAnswer.verdict !== 'pass') throw new Error('the clean conversation has findings')
  const judgedAnswer = await post(judgedPath, judgedBody())
  const judgedMethods = judgedAnswer.policies[0].rules.map((r) => `${r.type}:${r.method}:${r.status}`)
  const bigAnswer = await post(refPath, BIG_BODY)

  const reference = {
    requests: () => [{ method: 'POST', path: refPath, headers: auth, body: REFERENCE_BODY }],
  }
  const clean = {
    requests: () => [{ method: 'POST', path: refPath, headers: auth, body: CLEAN_BODY }],
  }
  const models = {
    requests: () => [
      { method: 'POST', path: '/v1/applications/models/evaluations', headers: auth, body: REFERENCE_BODY },
    ],
  }
  const baselineCase = {
    requests: () => [
      { method: 'POST', path: '/echo', headers: { 'content-type': 'application/json' }, body: APP_BODY },
    ],
  }

  if (opts.profile) {
    const which = opts['profile-case']
    const profiled =
      which === 'big'
        ? { requests: [{ method: 'POST', path: refPath, headers: auth, body: BIG_BODY }], connections: 2 }
        : { requests: (which === 'clean' ? clean : reference).requests() }
    await load({ port: warden.port, ...profiled, duration: 3 })
    console.log(`profiling: ${opts['profile-seconds']} s of the ${which} case under load`)
    const r = await load({ port: warden.port, ...profiled, duration: Number(opts['profile-seconds']) })
    console.log(`${r.requests.average} req/s, p99 ${r.latency.p99} ms, ${errorsOf(r)} errors`)
    warden.proc.kill('SIGINT')
    await new Promise((resolve) => warden.proc.on('exit', resolve))
    judge.server.close()
    rmSync(dir, { recursive: true, force: true })
    return
  }

  const baseline = await startProcess(['bench/baseline-server.mjs'], {}, { readyPath: '/' })
  await load({ port: baseline.port, requests: baselineCase.requests(), duration: 1 })
  await load({ port: warden.port, requests: reference.requests(), duration: 1 })
  await load({ port: warden.port, requests: clean.requests(), duration: 1 })
  await load({ port: warden.port, requests: models.requests(), duration: 1 })

  // Peak: each round of the reference case, and of the clean one, right after a baseline round of its own.
  const rounds = []
  const cleanRounds = []
  const modelRounds = []
  const paired = async (requests) => {
    const b = await load({ port: baseline.port, requests: baselineCase.requests() })
    const w = await load({ port: warden.port, requests })
    return {
      baselineRps: b.requests.average,
      rps: w.requests.average,
      ratio: w.requests.average / b.requests.average,
      p50: w.latency.p50,
      p99: w.latency.p99,
      errors: errorsOf(w),
    }
  }
  for (let i = 0; i < ROUNDS; i++) {
    rounds.push(await paired(reference.requests()))
    cleanRounds.push(await paired(clean.requests()))
    modelRounds.push(await paired(models.requests()))
  }
  // Each round's ratio with the models over the same round's without them.
  const modelsKept = median(modelRounds.map((r, i) => r.ratio / (rounds[i]?.ratio ?? Number.NaN)))
  const ratio = median(rounds.map((r) => r.ratio))
  const rps = median(rounds.map((r) => r.rps))
  const baselineRps = median(rounds.map((r) => r.baselineRps))
  const cleanRatio = median(cleanRounds.map((r) => r.ratio))
  const cleanRps = median(cleanRounds.map((r) => r.rps))
  const cleanBaselineRps = median(cleanRounds.map((r) => r.baselineRps))

  // Steady load at half the peak rate, and the baseline's tail at the same offered load.
  const rate = Math.round(rps / 2)
  // Open loop, evenly spaced (lib.mjs `steady`): autocannon's rate sends each second's quota back
  // to back, which measures a saturated server for half of each second.
  const alone = await steadyLoad({
    port: baseline.port,
    request: baselineCase.requests()[0],
    rate,
    duration: DURATION,
  })
  const steady = await steadyLoad({
    port: warden.port,
    request: reference.requests()[0],
    rate,
    duration: DURATION,
  })

  // The 0.9 MiB conversation: a few connections, so that reading one body overlaps evaluating another.
  const bigCase = { requests: () => [{ method: 'POST', path: refPath, headers: auth, body: BIG_BODY }] }
  await load({ port: warden.port, requests: bigCase.requests(), duration: 1, connections: 2 })
  const big = await load({ port: warden.port, requests: bigCase.requests(), connections: 2 })
  const bigTextBytes = textBytes(bigMessages)
  const mbPerSecond = (big.requests.total * bigTextBytes) / (1024 * 1024) / (big.duration || DURATION)

  // Five judged rules, one request at a time.
  const callsBefore = judge.calls()
  const latencies = []
  for (let i = 0; i < 5 + Number(opts['judged-requests']); i++) {
    const started = performance.now()
    await post(judgedPath, judgedBody())
    if (i >= 5) latencies.push(performance.now() - started)
  }
  const judgeCallsPerRequest = (judge.calls() - callsBefore) / (5 + Number(opts['judged-requests']))
  const judgedP50 = median(latencies)
  const judgedP99 = [...latencies].sort((a, b) => a - b)[Math.ceil(latencies.length * 0.99) - 1]

  for (const p of [warden.proc, baseline.proc]) p.kill('SIGTERM')
  judge.server.close()
  rmSync(dir, { recursive: true, force: true })
  const loadAfter = loadavg()

  const fmt = (n, d = 0) => n.toFixed(d)
  const errors =
    [...rounds, ...cleanRounds, ...modelRounds].reduce((a, r) => a + r.errors, 0) +
    steady.errors +
    errorsOf(big)
  const checks = [
    [
      'reference case ≥ 0.25 × baseline req/s',
      ratio >= 0.25,
      `${fmt(ratio, 3)} × (${fmt(rps)} / ${fmt(baselineRps)} req/s)`,
    ],
    [
      'reference case p99 ≤ 10 ms at half the peak rate',
      steady.p99 <= 10,
      `${steady.p99} ms at ${rate} req/s`,
    ],
    [
      'clean 4 KB conversation ≥ 0.35 × baseline req/s',
      cleanRatio >= 0.35,
      `${fmt(cleanRatio, 3)} × (${fmt(cleanRps)} / ${fmt(cleanBaselineRps)} req/s)`,
    ],
    [
      'reference + toxicity and prompt_injection (model) on the input ≥ 0.9 × the reference',
      modelsKept >= 0.9,
      `${fmt(modelsKept, 3)} × (${fmt(median(modelRounds.map((r) => r.rps)))} req/s)`,
    ],
    ['errors = 0', errors === 0, String(errors)],
    ['0.9 MiB conversation ≥ 30 MB/s', mbPerSecond >= 30, `${fmt(mbPerSecond, 1)} MB/s`],
    ['five judged rules p50 ≤ 70 ms, one at a time', judgedP50 <= 70, `${fmt(judgedP50, 1)} ms`],
  ]
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  const md = [
    `# Warden evaluation benchmark ${new Date().toISOString()}`,
    '',
    `Command: \`${command}\``,
    '',
    `${ROUNDS} rounds × ${DURATION} s, ${CONNECTIONS} connections, ${hasTaskset ? 'load generator on core 0, servers on core 1' : 'unpinned'}. Load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadAfter.map((l) => l.toFixed(2)).join(' ')} (a 2-core machine shared with other work: figures move by tens of percent).`,
    '',
    '| target | figure | result |',
    '|---|---:|---|',
    ...checks.map(([name, ok, value]) => `| ${name} | ${value} | ${ok ? 'PASS' : 'FAIL'} |`),
    '',
    '## Reference case',
    '',
    `${referenceMessages.length} messages, ${textBytes(referenceMessages)} bytes of text, ${Buffer.byteLength(REFERENCE_BODY)} bytes of body; one policy of ${referencePolicy.rules.length} rules (pii, keywords with ${PHRASES.length} phrases, two regex, length) over user, assistant and system. Findings of the checked answer: ${kinds.join(', ')}; verdict ${refAnswer.verdict}.`,
    '',
    '| round | baseline req/s | reference req/s | ratio | p50 ms | p99 ms | errors |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...rounds.map(
      (r, i) =>
        `| ${i + 1} | ${fmt(r.baselineRps)} | ${fmt(r.rps)} | ${fmt(r.ratio, 3)} | ${r.p50} | ${r.p99} | ${r.errors} |`,
    ),
    '',
    `Steady load at ${rate} req/s (half the median peak), evenly spaced, open loop, latency from each request's intended start: p50 ${steady.p50} ms, p99 ${steady.p99} ms, slowest ${steady.max} ms, ${steady.errors} errors in ${steady.requests}; the baseline at the same load: p50 ${alone.p50} ms, p99 ${alone.p99} ms.`,
    '',
    '## Clean conversation',
    '',
    `${cleanMessages.length} messages, ${textBytes(cleanMessages)} bytes of text, ${Buffer.byteLength(CLEAN_BODY)} bytes of body, nothing for the policy to find (prose, a few numbers, code); the same policy. Verdict of the checked answer: ${cleanAnswer.verdict}.`,
    '',
    '| round | baseline req/s | clean req/s | ratio | p50 ms | p99 ms | errors |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...cleanRounds.map(
      (r, i) =>
        `| ${i + 1} | ${fmt(r.baselineRps)} | ${fmt(r.rps)} | ${fmt(r.ratio, 3)} | ${r.p50} | ${r.p99} | ${r.errors} |`,
    ),
    '',
    '## 0.9 MiB conversation',
    '',
    `The same policy over ${bigMessages.length} messages holding ${bigTextBytes} bytes (${fmt(bigTextBytes / 1048576, 2)} MiB) of text in a ${Buffer.byteLength(BIG_BODY)}-byte body: the body limit is 1 MiB, so the text is 0.9 MiB and the JSON around it fits. ${big.requests.total} evaluations in ${big.duration || DURATION} s over 2 connections (${fmt(big.requests.average, 1)} req/s, p50 ${big.latency.p50} ms, ${errorsOf(big)} errors, ${bigAnswer.policies[0].rules.reduce((a, r) => a + r.findings.length, 0)} findings an answer): ${fmt(mbPerSecond, 1)} MB/s of conversation text (MB = 2^20 bytes).`,
    '',
    '## Five judged rules',
    '',
    `One policy of custom, factuality, relevance, toxicity and prompt_injection rules, against a judge double that answers after ${JUDGE_DELAY_MS} ms; each request's texts differ, so no answer comes from the judge cache. ${latencies.length} requests one at a time (after 5 of warm-up): p50 ${fmt(judgedP50, 1)} ms, p99 ${fmt(judgedP99, 1)} ms; ${fmt(judgeCallsPerRequest, 1)} judge calls a request. Rules of the checked answer: ${judgedMethods.join(', ')}.`,
    '',
  ]
  const text = md.join('\n')
  console.log(`\n${text}`)
  mkdirSync(join(root, 'bench', 'results'), { recursive: true })
  writeFileSync(join(root, 'bench', 'results', `${stamp}-evaluate.md`), `${text}\n`)
  console.log(`written: bench/results/${stamp}-evaluate.md`)
}

await runPinned(main)

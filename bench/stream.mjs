#!/usr/bin/env node
// Streamed replies released as they grow (docs/chat-completions.md): what Warden adds to a stream.
//
//   npm run build && node bench/stream.mjs [--rounds 5]
//
// An upstream double in this process streams a clean reply word by word (200 words, 20 ms a
// word); Warden (the built dist/, as `npm start` runs it) stands in front of it with the
// reference deterministic policy on the output (pii, keywords, regex `order [0-9]{6}`, length),
// and, for the
// judged case, a custom output rule too, asked of a judge double (this process too) that answers
// in 50 ms. Measured:
// (a) time to first token, straight from the upstream and through Warden;
// (b) for each character, the delay between the upstream writing it and the client reading it
//     (one clock: both ends are this process), against the time the upstream takes for 2 words;
// (c) Warden's CPU time (/proc/<pid>/stat) per streamed reply of 1, 10 and 100 KB sent at once,
//     and per KB, to show it grows linearly;
// (d) the same with the judged output rule (one judge call per window of STREAM_WINDOW_CHARS);
// (e) the first token of a reply opening with a masked value's placeholder, put back or not.
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  benchArgs,
  cpuSeconds,
  create,
  median,
  hasTaskset as pinned,
  runPinned,
  START_FLAGS,
  startProcess,
} from './lib.mjs'

const { ROUNDS } = benchArgs({ rounds: '5' })
const ADMIN_KEY = `wdn_bench_${'x'.repeat(32)}`
const WORDS = 200
const WORD_MS = 20
const JUDGE_MS = 50

const VOCABULARY =
  'your order left our warehouse this morning and should arrive soon you can follow the parcel from the link in the confirmation email we are happy to help with any question about delivery returns or invoices'.split(
    ' ',
  )
/** `count` words of a clean reply, as the upstream sends them (" word"; a sentence every 12 words). */
function replyWords(count, salt = 0) {
  const words = []
  // A small linear congruential generator: every salt a reply of its own, no sentence repeated.
  let state = (salt * 2654435761 + 1) >>> 0
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    let word = VOCABULARY[(state >>> 8) % VOCABULARY.length]
    if (i % 12 === 0) word = word[0].toUpperCase() + word.slice(1)
    if (i % 12 === 11 || i === count - 1) word += '.'
    words.push(i === 0 ? word : ` ${word}`)
  }
  return words
}
/** Words of a reply of about `bytes` bytes; each `salt` a different reply (the judge's cache never answers). */
const wordsOfSize = (bytes, salt) => {
  const words = replyWords(Math.ceil(bytes / 6), salt)
  let total = 0
  let n = 0
  while (n < words.length && total < bytes) total += words[n++].length
  return replyWords(n, salt)
}

const base = {
  id: 'chatcmpl-bench',
  object: 'chat.completion.chunk',
  created: 1795316060,
  model: 'bench-model',
}
const sse = (chunk) => `data: ${JSON.stringify(chunk)}\n\n`
const delta = (content) => sse({ ...base, choices: [{ index: 0, delta: { content }, finish_reason: null }] })

/**
 * The upstream double: streams the words the next request was given (`plan`), `gapMs` apart (0:
 * all at once), and records when it wrote each character's word.
 */
const plan = { words: replyWords(WORDS), gapMs: WORD_MS, sent: [] }
const upstream = createServer((req, res) => {
  req.resume()
  req.on('end', async () => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' })
    res.write(
      sse({
        ...base,
        choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      }),
    )
    const { words, gapMs } = plan
    plan.sent = []
    for (const [i, word] of words.entries()) {
      if (i > 0 && gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs))
      if (res.destroyed) return
      plan.sent.push(performance.now())
      res.write(delta(word))
    }
    res.write(sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }))
    res.end('data: [DONE]\n\n')
  })
})
/** The judge double: every question passes, after JUDGE_MS. */
let judgeCalls = 0
const judge = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    judgeCalls++
    setTimeout(() => {
      const content = JSON.stringify({ score: 0.95, reason: 'The reply keeps its promise.' })
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-judge',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        }),
      )
    }, JUDGE_MS)
  })
})
const listen = (server) =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)))

const BODY = JSON.stringify({
  model: 'bench-model',
  stream: true,
  messages: [{ role: 'user', content: 'Hello! Where is my order? I ordered it last Monday.' }],
})
/** A request whose e-mail address an input mask rule replaces by [EMAIL_1] before the upstream sees it. */
const MASKED_BODY = JSON.stringify({
  model: 'bench-model',
  stream: true,
  messages: [{ role: 'user', content: 'Hello! Please send the invoice to jane.doe@example.com today.' }],
})

/**
 * One streamed call: the time to the first text, and for each character the time it was read.
 * Resolves once [DONE] was read.
 */
function streamed(port, path, headers = {}, body = BODY) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    let first = null
    let buffer = ''
    const arrivals = []
    let text = ''
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        if (res.statusCode !== 200) {
          let body = ''
          res.setEncoding('utf8').on('data', (d) => {
            body += d
          })
          res.on('end', () => reject(new Error(`${path} answered ${res.statusCode}: ${body}`)))
          return
        }
        res.setEncoding('utf8')
        res.on('data', (part) => {
          const now = performance.now()
          buffer += part
          let end = buffer.indexOf('\n\n')
          while (end >= 0) {
            const event = buffer.slice(0, end)
            buffer = buffer.slice(end + 2)
            end = buffer.indexOf('\n\n')
            if (!event.startsWith('data: {')) continue
            const chunk = JSON.parse(event.slice(6))
            const content = chunk.choices?.[0]?.delta?.content ?? ''
            if (chunk.choices?.[0]?.finish_reason === 'content_filter')
              reject(new Error('the reply was stopped'))
            if (content === '') continue
            first ??= now - t0
            for (let i = 0; i < content.length; i++) arrivals.push(now)
            text += content
          }
        })
        res.on('end', () => resolve({ first, arrivals, text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** For each character of the reply, the time its word was written by the upstream. */
function writtenAt(words, sent) {
  const times = []
  for (const [i, word] of words.entries()) for (let k = 0; k < word.length; k++) times.push(sent[i])
  return times
}

const api = (port, path, payload) => create(port, ADMIN_KEY, path, payload)

const fmt = (x, digits = 1) => x.toFixed(digits)

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-stream-'))
  try {
    const upstreamPort = await listen(upstream)
    const judgePort = await listen(judge)
    const warden = await startProcess([...START_FLAGS, 'bin/warden.js', 'serve'], {
      DATABASE_URL: `sqlite:${join(dir, 'warden.db')}`,
      WARDEN_ADMIN_KEY: ADMIN_KEY,
      RATE_LIMIT_PER_MINUTE: '100000000',
      LOG_LEVEL: 'warn',
      PROVIDER_BENCH_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`,
      JUDGE_BASE_URL: `http://127.0.0.1:${judgePort}/v1`,
      JUDGE_MODEL: 'judge-model',
    })
    const reference = {
      rules: [
        { type: 'pii' },
        { type: 'keywords', flagged: ['refund guarantee', 'legal advice', 'wire transfer', 'gift card'] },
        { type: 'regex', value: 'order [0-9]{6}' },
        { type: 'length', value: '200000' },
      ],
      target: ['output'],
      override_response: 'Sorry, I cannot share that.',
    }
    for (const id of ['deterministic', 'judged']) {
      await api(warden.port, '/v1/applications', {
        id,
        name: id,
        description: 'The streaming benchmark',
        provider: 'bench',
        model: 'bench-model',
      })
      await api(warden.port, `/v1/applications/${id}/policies`, { id: 'reference', ...reference })
    }
    await api(warden.port, '/v1/applications/judged/policies', {
      id: 'promises',
      rules: [{ type: 'custom' }],
      definition: 'The reply makes no promise the shop cannot keep.',
      target: ['output'],
    })
    // Masking: the same output policy, and an input rule masking e-mail addresses, whose values
    // are put back into the reply (`masked`) or not (`masked-kept`).
    for (const [id, restore] of [
      ['masked', true],
      ['masked-kept', false],
    ]) {
      await api(warden.port, '/v1/applications', {
        id,
        name: id,
        description: 'The streaming benchmark, masking',
        provider: 'bench',
        model: 'bench-model',
      })
      await api(warden.port, `/v1/applications/${id}/policies`, { id: 'reference', ...reference })
      await api(warden.port, `/v1/applications/${id}/policies`, {
        id: 'mask-email',
        rules: [{ type: 'pii', flagged: ['email'], action: 'mask', restore }],
        target: ['input'],
        override_response: 'Sorry, I cannot share that.',
      })
    }
    const headers = { authorization: `Bearer ${ADMIN_KEY}` }
    const through = (app) => () => streamed(warden.port, `/v1/applications/${app}/chat/completions`, headers)
    const direct = () => streamed(upstreamPort, '/v1/chat/completions')

    console.log(`# Warden streaming benchmark ${new Date().toISOString()}`)
    console.log()
    console.log(
      `Command: \`node bench/stream.mjs --rounds ${ROUNDS}\` (${pinned ? 'this process on core 0, Warden on core 1' : 'no taskset: unpinned'}; Node ${process.versions.node}). Upstream: ${WORDS} words, ${WORD_MS} ms a word; judge: ${JUDGE_MS} ms an answer.`,
    )
    // Warm-up: each path once (a reply of its own, so the paced rounds' windows are judged, not cached).
    plan.words = replyWords(WORDS, 1000)
    plan.gapMs = 0
    await direct()
    await through('deterministic')()
    await through('judged')()
    // Each paced round a reply of its own.

    plan.words = replyWords(WORDS)
    plan.gapMs = 0
    await direct()
    await through('deterministic')()
    await through('judged')()

    // (a) and (b): a paced reply.
    plan.gapMs = WORD_MS
    const paced = { direct: [], deterministic: [], judged: [] }
    for (let round = 0; round < ROUNDS; round++) {
      // Each round a reply of its own: the judge's cache answers none of its windows.
      plan.words = replyWords(WORDS, 2000 + round)
      for (const [name, call] of [
        ['direct', direct],
        ['deterministic', through('deterministic')],
        ['judged', through('judged')],
      ]) {
        const run = await call()
        if (run.text !== plan.words.join('')) throw new Error(`${name}: the reply arrived changed`)
        const written = writtenAt(plan.words, plan.sent)
        const delays = run.arrivals.map((t, i) => t - written[i]).sort((a, b) => a - b)
        paced[name].push({
          first: run.first,
          delay: median(delays),
          p99: delays[Math.floor(delays.length * 0.99)],
        })
      }
    }
    // The first token of a reply that does not open with a finding in progress: its first chunk
    // ends in punctuation. (A bare first word may still be an address's local part, `Thanks` +
    // `@example.com`, so the email detector holds it until the next character arrives.)
    const opening = { direct: [], deterministic: [] }
    for (let round = 0; round < ROUNDS; round++) {
      plan.words = replyWords(20, 3000 + round)
      plan.words[0] = 'Sure,'
      for (const [name, call] of [
        ['direct', direct],
        ['deterministic', through('deterministic')],
      ]) {
        const run = await call()
        if (run.text !== plan.words.join('')) throw new Error(`${name}: the reply arrived changed`)
        opening[name].push(run.first)
      }
    }
    // Restoring: a reply that opens with the placeholder the upstream was given, through an
    // application that puts the value back and one that does not (the same masking otherwise).
    const restoring = { masked: [], 'masked-kept': [] }
    for (let round = 0; round < 3 * ROUNDS; round++) {
      plan.words = replyWords(20, 4000 + round)
      plan.words[0] = '[EMAIL_1]'
      plan.words[1] = ' is'
      for (const name of round % 2 === 0 ? ['masked', 'masked-kept'] : ['masked-kept', 'masked']) {
        const run = await streamed(
          warden.port,
          `/v1/applications/${name}/chat/completions`,
          headers,
          MASKED_BODY,
        )
        const expected = plan.words.join('')
        const want = name === 'masked' ? expected.replace('[EMAIL_1]', 'jane.doe@example.com') : expected
        if (run.text !== want) throw new Error(`${name}: the reply arrived changed: ${run.text}`)
        restoring[name].push(run.first)
      }
    }
    const m = (name, key) => median(paced[name].map((r) => r[key]))
    console.log()
    console.log(`## A paced clean reply (ms; medians of ${ROUNDS} rounds)`)
    console.log()
    console.log('| path | first token | per-character delay, median | p99 |')
    console.log('|---|---:|---:|---:|')
    for (const name of ['direct', 'deterministic', 'judged'])
      console.log(
        `| ${name === 'direct' ? 'straight from the upstream' : `through Warden, ${name === 'judged' ? 'reference + judged custom rule' : 'reference policy'}`} | ${fmt(m(name, 'first'))} | ${fmt(m(name, 'delay'))} | ${fmt(m(name, 'p99'))} |`,
      )

    // (c) and (d): CPU per reply, sent at once.
    plan.gapMs = 0
    const sizes = [
      [1024, 20, 5],
      [10 * 1024, 8, 2],
      [100 * 1024, 3, 1],
    ]
    const cpu = []
    let salt = 0
    for (const [bytes, repsDeterministic, repsJudged] of sizes) {
      const row = { bytes }
      for (const [name, reps] of [
        ['deterministic', repsDeterministic],
        ['judged', repsJudged],
      ]) {
        const calls0 = judgeCalls
        const cpu0 = cpuSeconds(warden.proc.pid)
        const t0 = performance.now()
        for (let i = 0; i < reps; i++) {
          plan.words = wordsOfSize(bytes, ++salt)
          const run = await through(name)()
          if (run.text.length !== plan.words.join('').length)
            throw new Error(`${name}: the reply arrived changed`)
        }
        row[name] = {
          cpuMs: ((cpuSeconds(warden.proc.pid) - cpu0) / reps) * 1000,
          wallMs: (performance.now() - t0) / reps,
          judgeCalls: (judgeCalls - calls0) / reps,
        }
      }
      cpu.push(row)
    }
    console.log()
    console.log('## Warden CPU per streamed reply, sent at once (ms; user + system)')
    console.log()
    console.log(
      '| reply | reference: CPU | per KB | wall | + judged rule: CPU | per KB | judge calls | wall |',
    )
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|')
    for (const row of cpu) {
      const kb = row.bytes / 1024
      const d = row.deterministic
      const j = row.judged
      console.log(
        `| ${kb} KB | ${fmt(d.cpuMs)} | ${fmt(d.cpuMs / kb, 2)} | ${fmt(d.wallMs)} | ${fmt(j.cpuMs)} | ${fmt(j.cpuMs / kb, 2)} | ${j.judgeCalls} | ${fmt(j.wallMs)} |`,
      )
    }

    console.log()
    console.log(`## Restoring a masked value in a streamed reply (ms; medians of ${3 * ROUNDS} rounds)`)
    console.log()
    console.log('| path | first token |')
    console.log('|---|---:|')
    console.log(`| input masked, the value put back into the reply | ${fmt(median(restoring.masked))} |`)
    console.log(
      `| input masked, the placeholder left in the reply (\`restore: false\`) | ${fmt(median(restoring['masked-kept']))} |`,
    )

    const restoreAdded = median(restoring.masked) - median(restoring['masked-kept'])
    const firstAdded = median(opening.deterministic) - median(opening.direct)
    const bareFirstAdded = m('deterministic', 'first') - m('direct', 'first')
    const delayBudget = 2 * WORD_MS + 5
    const perKb = cpu.map((r) => r.deterministic.cpuMs / (r.bytes / 1024))
    const judgedPerKb = cpu.map((r) => r.judged.cpuMs / (r.bytes / 1024))
    // Linear: the cost per KB at 100 KB is within 2× of the cost per KB at 10 KB.
    const linear = (xs) => xs[2] <= 2 * xs[1]
    console.log()
    console.log('Budget:')
    console.log()
    console.log(
      `    ${firstAdded <= 10 ? 'PASS' : 'FAIL'}  first token ≤ upstream's + 10 ms, a reply opening with "Sure,"  (+${fmt(firstAdded)} ms; opening with a bare word, which may be an address in progress: +${fmt(bareFirstAdded)} ms)`,
    )
    console.log(
      `    ${restoreAdded <= 2 ? 'PASS' : 'FAIL'}  restoring adds ≤ 2 ms to the first token, a reply opening with its placeholder  (${restoreAdded >= 0 ? '+' : ''}${fmt(restoreAdded)} ms)`,
    )
    console.log(
      `    ${m('deterministic', 'delay') <= delayBudget ? 'PASS' : 'FAIL'}  median delay ≤ 2 words (${2 * WORD_MS} ms) + 5 ms  (${fmt(m('deterministic', 'delay'))} ms; the upstream's own: ${fmt(m('direct', 'delay'))} ms)`,
    )
    console.log(
      `    ${linear(perKb) ? 'PASS' : 'FAIL'}  linear CPU, reference  (${perKb.map((x) => fmt(x, 2)).join(' / ')} ms per KB at 1 / 10 / 100 KB)`,
    )
    console.log(
      `    ${linear(judgedPerKb) ? 'PASS' : 'FAIL'}  linear CPU, judged  (${judgedPerKb.map((x) => fmt(x, 2)).join(' / ')} ms per KB)`,
    )
  } finally {
    upstream.closeAllConnections()
    upstream.close()
    judge.closeAllConnections()
    judge.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

runPinned(main)

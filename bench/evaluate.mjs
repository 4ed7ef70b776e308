#!/usr/bin/env node
// What the deterministic policy evaluator costs per evaluation, without HTTP or a store: a
// reference policy (pii, keywords, regex, length over input and output) on a short conversation
// and on one of about 10 KB, plus the cost of compiling the policy (paid once per revision).
// Prints the median µs per evaluation over several rounds, and the spread of the rounds; then
// each rule of the policy alone, which shows where the time goes (the evaluator's own share is
// the length rule's line: reading the conversation, building the answer, deciding).
//
//   npm run build && node bench/evaluate.mjs
//   node bench/evaluate.mjs --dist /tmp/other-build --rounds 15
//
// Then the policy and conversations of bench/evaluate-http.mjs (bench/evaluation-cases.mjs): the
// reference conversation (4 KB holding an email, a phone number, a card number and a keyword), a
// clean conversation of the same size with nothing to find, as most production text is, and the
// 0.9 MiB one, each evaluated whole and then by each detector rule alone. `--only http` runs just
// these.
//
// `--clock cpu` counts this process's CPU time instead of elapsed time.
//
// Run it on an idle core (`taskset -c 1 node bench/evaluate.mjs`): the machine's drift moves
// single figures by tens of percent, so compare builds in the same minute.
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import {
  BIG_MESSAGES,
  CLEAN_MESSAGES,
  REFERENCE_MESSAGES,
  REFERENCE_POLICY,
  textBytes,
} from './evaluation-cases.mjs'

const { values: opts } = parseArgs({
  options: {
    dist: { type: 'string', default: new URL('../dist', import.meta.url).pathname },
    rounds: { type: 'string', default: '11' },
    'round-ms': { type: 'string', default: '300' },
    // `http`: only the policy and conversations of bench/evaluate-http.mjs.
    only: { type: 'string' },
    // `cpu`: µs of this process's CPU (user + system) per call instead of elapsed µs, steadier
    // on a machine shared with other work.
    clock: { type: 'string', default: 'wall' },
  },
})

const {
  compilePolicy: compileWith,
  evaluate,
  redactConversation,
} = await import(pathToFileURL(resolve(opts.dist, 'rules/evaluate.js')).href)
const { shippedClassifiers } = await import(pathToFileURL(resolve(opts.dist, 'models/shipped.js')).href)
const classifiers = shippedClassifiers()
const compilePolicy = (policy) => compileWith(policy, classifiers)

const rule = (type, fields = {}) => ({
  type,
  expected: 'pass',
  value: null,
  threshold: null,
  flagged: null,
  ...fields,
})

/** The reference policy: the four detector types, as a support bot would configure them. */
const reference = {
  id: 'reference',
  revision: 1,
  draft: false,
  target: ['input', 'output'],
  definition: null,
  override_response: 'Sorry, I cannot share that.',
  mode: 'enforce',
  on_error: 'fail_closed',
  rules: [
    rule('pii'),
    rule('keywords', {
      flagged: ['password', 'social security number', 'wire transfer', 'internal only', 'api key'],
    }),
    rule('regex', { value: '\\b(?:secret|token)\\s*[:=]\\s*\\S+' }),
    rule('length', { value: '20000' }),
  ],
}

const short = {
  messages: [
    { role: 'system', content: 'You are a helpful support agent for Acme. Answer briefly.' },
    {
      role: 'user',
      content: 'Hi, my card 4111 1111 1111 1111 was charged twice. Email me at jane@example.com please.',
    },
    {
      role: 'assistant',
      content: 'Sorry about that! I have opened a refund request; you will hear from us within 2 days.',
    },
  ],
  context: null,
}

const paragraph =
  'Our refund policy covers duplicate charges on any card. Customers may call +1 415 555 0134 or write to ' +
  'support@acme.example for help; refunds arrive within five business days of approval. '
const long = {
  messages: [
    { role: 'system', content: 'You are a helpful support agent for Acme. Answer briefly.' },
    { role: 'user', content: paragraph.repeat(Math.ceil(8_000 / paragraph.length)) },
    { role: 'assistant', content: paragraph.repeat(Math.ceil(2_000 / paragraph.length)) },
  ],
  context: null,
}
const size = (c) => c.messages.reduce((n, m) => n + m.content.length, 0)

const options = { judge: null }

/** Median µs per call of `run`, over rounds of about `round-ms` (calls made `batch` at a time). */
async function measure(run, batch = 50) {
  const rounds = Number(opts.rounds)
  const roundMs = Number(opts['round-ms'])
  // Warm-up: let the JIT settle before the first measured round.
  const until = performance.now() + 500
  while (performance.now() < until) await run()
  const perCall = []
  for (let r = 0; r < rounds; r++) {
    let calls = 0
    const start = performance.now()
    const cpu = process.cpuUsage()
    let now = start
    while (now - start < roundMs) {
      for (let i = 0; i < batch; i++) await run()
      calls += batch
      now = performance.now()
    }
    const used = process.cpuUsage(cpu)
    perCall.push((opts.clock === 'cpu' ? used.user + used.system : (now - start) * 1000) / calls)
  }
  perCall.sort((a, b) => a - b)
  const mid = perCall[Math.floor(perCall.length / 2)]
  return { median: mid, min: perCall[0], max: perCall[perCall.length - 1] }
}

const compiled = [compilePolicy(reference)]
const fmt = (x) => (x < 10 ? x.toFixed(2) : x.toFixed(1))
const line = (name, m) =>
  console.log(`${name.padEnd(44)} ${fmt(m.median).padStart(8)} µs  (rounds ${fmt(m.min)}–${fmt(m.max)})`)

console.log(
  `node ${process.version}, ${opts.rounds} rounds of ${opts['round-ms']} ms, median µs per call` +
    (opts.clock === 'cpu' ? ' (of CPU time)' : ''),
)
if (opts.only !== 'http') {
  const outcome = await evaluate(compiled, short, options)
  console.log(
    `reference policy on the short conversation: verdict ${outcome.verdict}, ` +
      `${outcome.policies[0].rules.reduce((n, r) => n + r.findings.length, 0)} findings`,
  )
  line('compile the reference policy', await measure(() => compilePolicy(reference)))
  line(
    `evaluate, short conversation (${size(short)} chars)`,
    await measure(() => evaluate(compiled, short, options)),
  )
  line(
    `evaluate, long conversation (${size(long)} chars)`,
    await measure(() => evaluate(compiled, long, options)),
  )
  for (const [name, conversation] of [
    ['short', short],
    ['long', long],
  ]) {
    for (const r of reference.rules) {
      const alone = [compilePolicy({ ...reference, rules: [r] })]
      line(`  ${r.type} rule alone, ${name}`, await measure(() => evaluate(alone, conversation, options)))
    }
  }
  // The same policy with the offline classifiers on the input (the budget: at most 10% of the
  // reference evaluation's HTTP throughput, bench/README.md).
  const withModels = [
    compilePolicy(reference),
    compilePolicy({
      ...reference,
      id: 'models',
      target: ['input'],
      rules: [rule('toxicity'), rule('prompt_injection')],
    }),
  ]
  for (const [name, conversation] of [
    ['short', short],
    ['long', long],
  ]) {
    line(
      `  + toxicity and prompt_injection on the input, ${name}`,
      await measure(() => evaluate(withModels, conversation, options)),
    )
  }
  line(
    'evaluate + redact, short conversation',
    await measure(async () => redactConversation(short, await evaluate(compiled, short, options))),
  )
}

// The policy and conversations of bench/evaluate-http.mjs.
const httpRule = (r) => rule(r.type, { value: r.value ?? null, flagged: r.flagged ?? null })
const httpPolicy = (rules) => ({
  ...reference,
  id: REFERENCE_POLICY.id,
  target: REFERENCE_POLICY.target,
  override_response: REFERENCE_POLICY.override_response,
  rules: rules.map(httpRule),
})
const httpCompiled = [compilePolicy(httpPolicy(REFERENCE_POLICY.rules))]
const cases = [
  ['reference', { messages: REFERENCE_MESSAGES, context: null }, 50],
  ['clean', { messages: CLEAN_MESSAGES, context: null }, 50],
  ['0.9 MiB', { messages: BIG_MESSAGES, context: null }, 1],
]
const findingsOf = (outcome) =>
  outcome.policies[0].rules.flatMap((r) => r.findings.map((f) => (r.type === 'pii' ? f.kind : r.type)))
for (const [name, conversation] of cases) {
  const found = findingsOf(await evaluate(httpCompiled, conversation, options))
  const summary = found.length > 20 ? `${found.length} findings` : found.join(', ') || 'no finding'
  console.log(`evaluate-http.mjs's policy, ${name} (${textBytes(conversation.messages)} bytes): ${summary}`)
  if (name === 'clean' && found.length > 0) throw new Error('the clean conversation has findings')
}
const byType = [
  ['pii', REFERENCE_POLICY.rules.filter((r) => r.type === 'pii')],
  ['keywords', REFERENCE_POLICY.rules.filter((r) => r.type === 'keywords')],
  ['two regex', REFERENCE_POLICY.rules.filter((r) => r.type === 'regex')],
]
for (const [name, conversation, batch] of cases) {
  line(
    `http policy, ${name} conversation`,
    await measure(() => evaluate(httpCompiled, conversation, options), batch),
  )
  for (const [type, rules] of byType) {
    const alone = [compilePolicy(httpPolicy(rules))]
    line(
      `  ${type} rule${type === 'two regex' ? 's' : ''} alone, ${name}`,
      await measure(() => evaluate(alone, conversation, options), batch),
    )
  }
}

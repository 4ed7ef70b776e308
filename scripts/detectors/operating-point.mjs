// The operating point of prompt_injection's default threshold, measured on sources left out, and
// what the second stage adds there.
//
//   node scripts/detectors/operating-point.mjs --data DATA --oof OOF --network CARD [--work DIR] [--reuse]
//
// OOF is what `train-neural.py --cv K --oof OOF` writes: each training row with the fold its
// source was left out in and the logit the network trained without that fold gave it; CARD is the
// card that run wrote (its operating point turns the logit into the score the server sees). For
// each fold this trains the linear model (train.mjs) on DATA without the fold's sources and scores
// the fold's rows with it, as rules score them: every row then has two scores from models that
// never saw its source. Over the messages (a fold that holds every document source trains a linear
// model that never saw a document, so left-out documents say nothing) it prints:
//
// - for thresholds from 0.3 to 0.95, the linear model's share of benign messages flagged and of
//   attacks caught: what the default threshold means on text from sources never seen;
// - recall at 1%, 3%, 5% and 10% of benign messages flagged, and the figures at 0.5, for the linear
//   model alone, the cascade as the server runs it (the network's score inside the band 0.1–0.9),
//   and a logistic regression of the two logits fitted on these same left-out rows (an upper
//   bound for any weighing of the two: it is fitted on what it is measured on).
//
// DIR/scores.jsonl keeps every row's two scores (not its text). --reuse keeps the fold models a
// run before left in DIR. The measure sets are never read.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Classifier, parseModel } from '../../dist/rules/detectors/classifier/linear.js'
import { injectionScorer } from '../../dist/rules/detectors/classifier/scorers.js'
import { flags } from './lib.mjs'

const args = flags(process.argv.slice(2))
if (typeof args.data !== 'string' || typeof args.oof !== 'string' || typeof args.network !== 'string') {
  console.error('usage: operating-point.mjs --data DATA --oof OOF --network CARD [--work DIR] [--reuse]')
  process.exit(2)
}
const work = typeof args.work === 'string' ? args.work : '/tmp/warden-operating-point'
const task = 'prompt_injection'
const BAND = { low: 0.1, high: 0.9 }
const card = JSON.parse(readFileSync(args.network, 'utf8'))
const networkShift = card.cv?.operating_point?.logit
if (typeof networkShift !== 'number') {
  console.error(`${args.network} has no operating point: train the network with --cv`)
  process.exit(2)
}

const logit = (p) => {
  const q = Math.min(Math.max(p, 1e-6), 1 - 1e-6)
  return Math.log(q / (1 - q))
}
const sigmoid = (z) => 1 / (1 + Math.exp(-z))

const oof = readFileSync(args.oof, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l))
const folds = [...new Set(oof.map((r) => r.fold))].sort((a, b) => a - b)

// The linear model trained without each fold's sources scores that fold's rows.
const files = readdirSync(args.data).filter(
  (f) => f === `${task}.jsonl` || (f.startsWith(`${task}.`) && f.endsWith('.jsonl')),
)
for (const fold of folds) {
  const left = new Set(oof.filter((r) => r.fold === fold).map((r) => r.source))
  const dir = join(work, `fold-${fold}`)
  const model = join(dir, 'model', `${task}.wdm`)
  if (!(args.reuse === true && existsSync(model))) {
    mkdirSync(join(dir, 'model'), { recursive: true })
    for (const file of files) {
      const kept = readFileSync(join(args.data, file), 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '' && !left.has(JSON.parse(l).source))
      writeFileSync(join(dir, file), kept.length > 0 ? `${kept.join('\n')}\n` : '')
    }
    const started = Date.now()
    execFileSync(
      process.execPath,
      ['scripts/detectors/train.mjs', '--data', dir, '--task', task, '--out', join(dir, 'model')],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    )
    console.error(
      `fold ${fold}: linear model trained without ${[...left].join(', ')} in ${Math.round((Date.now() - started) / 1000)} s`,
    )
  }
  const score = injectionScorer(new Classifier(parseModel(readFileSync(model))))
  for (const row of oof) {
    if (row.fold !== fold) continue
    const document = row.reading === 'document'
    const target = document
      ? { source: 'context', index: 0, role: 'context', text: row.text }
      : { source: 'messages', index: 0, role: 'user', text: row.text }
    row.linear = score(target, 0.5).score
    row.network = logit(sigmoid(row.logit - networkShift))
  }
}

// Kept for inspection: every row with both left-out scores, the texts left out.
writeFileSync(
  join(work, 'scores.jsonl'),
  `${oof
    .map((r) =>
      JSON.stringify({
        source: r.source,
        label: r.label,
        reading: r.reading,
        fold: r.fold,
        linear: r.linear,
        network: r.network,
      }),
    )
    .join('\n')}\n`,
)

const asked = (r) => r.linear <= BAND.high && r.linear >= BAND.low
const messages = oof.filter((r) => r.reading !== 'document')
const attacks = messages.filter((r) => r.label === 1)
const benign = messages.filter((r) => r.label === 0)

// Logistic regression on [logit(linear), network logit] over the messages the second stage is
// asked about, classes weighed equally, a small L2 penalty on the two weights (Newton's method,
// the step halved until the loss falls).
const fit = messages.filter(asked)
const features = (r) => [logit(r.linear), r.network, 1]
const positives = fit.filter((r) => r.label === 1).length
const weightOf = (r) =>
  r.label === 1 ? fit.length / (2 * positives) : fit.length / (2 * (fit.length - positives))
const L2 = 1
const loss = (v) => {
  let total = (L2 / 2) * (v[0] * v[0] + v[1] * v[1])
  for (const r of fit) {
    const x = features(r)
    const z = x[0] * v[0] + x[1] * v[1] + x[2] * v[2]
    // log(1 + e^z) − y·z, computed without overflow
    total += weightOf(r) * (Math.max(z, 0) + Math.log1p(Math.exp(-Math.abs(z))) - r.label * z)
  }
  return total
}
let w = [1, 0, 0]
for (let step = 0; step < 100; step++) {
  const g = [L2 * w[0], L2 * w[1], 0]
  const h = [
    [L2, 0, 0],
    [0, L2, 0],
    [0, 0, 1e-6],
  ]
  for (const r of fit) {
    const x = features(r)
    const p = sigmoid(x[0] * w[0] + x[1] * w[1] + x[2] * w[2])
    const c = weightOf(r)
    for (let i = 0; i < 3; i++) {
      g[i] += c * (p - r.label) * x[i]
      for (let j = 0; j < 3; j++) h[i][j] += c * p * (1 - p) * x[i] * x[j]
    }
  }
  const d = solve3(h, g)
  const before = loss(w)
  let t = 1
  let next = w.map((v, i) => v - t * d[i])
  while (loss(next) > before && t > 1e-6) {
    t /= 2
    next = w.map((v, i) => v - t * d[i])
  }
  w = next
  if (Math.max(...d.map((x) => Math.abs(t * x))) < 1e-9) break
}

function solve3(a, b) {
  const m = a.map((row, i) => [...row, b[i]])
  for (let c = 0; c < 3; c++) {
    let p = c
    for (let r = c + 1; r < 3; r++) if (Math.abs(m[r][c]) > Math.abs(m[p][c])) p = r
    ;[m[c], m[p]] = [m[p], m[c]]
    for (let r = 0; r < 3; r++) {
      if (r === c) continue
      const f = m[r][c] / m[c][c]
      for (let k = c; k < 4; k++) m[r][k] -= f * m[c][k]
    }
  }
  return m.map((row, i) => row[3] / row[i])
}

const pct = (x) => `${(100 * x).toFixed(1)}%`
const share = (rows, f, t) => rows.filter((r) => f(r) > t).length / Math.max(1, rows.length)
const auc = (f) => {
  const neg = benign.map(f).sort((a, b) => a - b)
  let total = 0
  for (const r of attacks) {
    const s = f(r)
    let lo = 0
    let hi = neg.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (neg[mid] < s) lo = mid + 1
      else hi = mid
    }
    let eq = lo
    while (eq < neg.length && neg[eq] === s) eq++
    total += lo + (eq - lo) / 2
  }
  return total / attacks.length / neg.length
}
const linear = (r) => r.linear
const scorers = [
  ['linear model alone (the default)', linear],
  ['cascade as the server runs it', (r) => (asked(r) ? sigmoid(r.network) : r.linear)],
  [
    'linear and network weighed (fitted on these rows)',
    (r) => (asked(r) ? sigmoid(w[0] * logit(r.linear) + w[1] * r.network + w[2]) : r.linear),
  ],
]

console.log(
  `\nLeft out (${folds.length} folds of sources): ${attacks.length} attack and ${benign.length} benign messages from ${new Set(messages.map((r) => r.source)).size} sources\n`,
)
console.log('| threshold | linear model: benign messages flagged | attacks caught |')
console.log('|---:|---:|---:|')
for (const t of [0.3, 0.5, 0.7, 0.8, 0.9, 0.95])
  console.log(`| ${t} | ${pct(share(benign, linear, t))} | ${pct(share(attacks, linear, t))} |`)

console.log('\n| scorer | ROC-AUC | R@1% | R@3% | R@5% | R@10% | at 0.5: benign flagged / caught |')
console.log('|---|---:|---:|---:|---:|---:|---:|')
for (const [name, f] of scorers) {
  const sorted = benign.map(f).sort((a, b) => b - a)
  const at = (k) => pct(share(attacks, f, sorted[Math.min(sorted.length - 1, Math.floor(k * sorted.length))]))
  console.log(
    `| ${name} | ${auc(f).toFixed(3)} | ${at(0.01)} | ${at(0.03)} | ${at(0.05)} | ${at(0.1)} | ${pct(share(benign, f, 0.5))} / ${pct(share(attacks, f, 0.5))} |`,
  )
}
console.log(
  `\nweighed: ${w[0].toFixed(3)} × logit(linear) + ${w[1].toFixed(3)} × network logit + ${w[2].toFixed(3)}, ` +
    `fitted on the ${fit.length} messages inside the band (${positives} attacks)`,
)

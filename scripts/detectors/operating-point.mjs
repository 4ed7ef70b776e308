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
//   and a logistic regression of the two logits fitted on these same left-out rows (a generous
//   estimate of what weighing the two could give: it is fitted on what it is measured on).
//
// The messages are OOF's rows: what the network's cross-validation kept (train-neural.py's
// --cap, at most that many rows per source and label), so pooled shares follow that mix. The
// cascade's network scores are the cross-validation's, shifted by CARD's operating point.
//
// DIR/scores.jsonl keeps every row's two scores (not its text). --reuse keeps a fold's model from
// a run before in DIR when it was trained without the same sources (DIR/fold-N/left-out.json).
// The measure sets are never read.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Classifier, parseModel } from '../../dist/rules/detectors/classifier/linear.js'
import { injectionScorer } from '../../dist/rules/detectors/classifier/scorers.js'
import { auc, fitLogistic, flags, recallAt } from './lib.mjs'

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
  const leftOut = JSON.stringify([...left].sort())
  const record = join(dir, 'left-out.json')
  const reusable =
    args.reuse === true && existsSync(model) && existsSync(record) && readFileSync(record, 'utf8') === leftOut
  if (!reusable) {
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
    writeFileSync(record, leftOut)
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
    // Threshold 1: the score alone, no explanation worked out.
    row.linear = score(target, 1).score
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
// asked about, classes weighed equally, a small L2 penalty on the two weights.
const fit = messages.filter(asked)
const positives = fit.filter((r) => r.label === 1).length
// Null when the band holds messages of one class only: nothing to weigh.
const w =
  positives > 0 && positives < fit.length
    ? fitLogistic(
        fit.map((r) => [logit(r.linear), r.network, 1]),
        fit.map((r) => r.label),
        fit.map((r) =>
          r.label === 1 ? fit.length / (2 * positives) : fit.length / (2 * (fit.length - positives)),
        ),
      )
    : null

const pct = (x) => `${(100 * x).toFixed(1)}%`
const share = (rows, f, t) => rows.filter((r) => f(r) > t).length / Math.max(1, rows.length)
const linear = (r) => r.linear
const scorers = [
  ['linear model alone (the default)', linear],
  ['cascade as the server runs it', (r) => (asked(r) ? sigmoid(r.network) : r.linear)],
]
if (w !== null)
  scorers.push([
    'linear and network weighed (fitted on these rows)',
    (r) => (asked(r) ? sigmoid(w[0] * logit(r.linear) + w[1] * r.network + w[2]) : r.linear),
  ])

console.log(
  `\nLeft out (${folds.length} folds of sources): ${attacks.length} attack and ${benign.length} benign messages from ${new Set(messages.map((r) => r.source)).size} sources\n`,
)
console.log('| threshold | linear model: benign messages flagged | attacks caught |')
console.log('|---:|---:|---:|')
for (const t of [0.3, 0.5, 0.7, 0.8, 0.9, 0.95])
  console.log(`| ${t} | ${pct(share(benign, linear, t))} | ${pct(share(attacks, linear, t))} |`)

console.log('\n| scorer | ROC-AUC | R@1% | R@3% | R@5% | R@10% | at 0.5: benign flagged / caught |')
console.log('|---|---:|---:|---:|---:|---:|---:|')
const labels = messages.map((r) => r.label)
for (const [name, f] of scorers) {
  const scores = messages.map(f)
  const benignScores = benign.map(f)
  const at = (k) => pct(recallAt(scores, labels, benignScores, k))
  console.log(
    `| ${name} | ${auc(scores, labels).toFixed(3)} | ${at(0.01)} | ${at(0.03)} | ${at(0.05)} | ${at(0.1)} | ${pct(share(benign, f, 0.5))} / ${pct(share(attacks, f, 0.5))} |`,
  )
}
console.log(
  w === null
    ? `\nnothing weighed: the ${fit.length} messages inside the band are of one class`
    : `\nweighed: ${w[0].toFixed(3)} × logit(linear) + ${w[1].toFixed(3)} × network logit + ${w[2].toFixed(3)}, ` +
        `fitted on the ${fit.length} messages inside the band (${positives} attacks)`,
)

// How well the offline classifiers catch what they claim, and how often they cry wolf: per task
// and source, n, precision, recall, F1, false-positive rate (for a source of benign texts only:
// the share flagged) and ROC-AUC of the shipped models (models/*.wdm) at the default threshold
// (0.5), scored exactly as a toxicity or prompt_injection rule scores a text: rows marked
// `reading: "document"` as a `context` document, the others as a user message.
//
//   npm run bench:quality -- --data DIR [--data DIR2 ...] [--threshold 0.5] [--task NAME]
//                            [--split SOURCE ...] [--stage cascade|linear|second]
//                            [--categories hate,harassment]
//
// --stage: for prompt_injection, what scores a text: `linear` (the default: the linear model alone,
// as rules score it unless PROMPT_INJECTION_SECOND_STAGE=true), `cascade` (the linear model outside
// its uncertain band, the second stage inside it and for documents, as rules score it with the
// second stage on) or `second` (the second stage alone). R@1% and R@5% are the recall at the thresholds that flag 1% and 5% of the
// benign texts: the source's own, or, for a source of attacks only, all benign texts of DIR
// (marked *).
//
// --categories: for toxicity, score as a rule listing those categories scores (the highest
// P(toxic) × P(category | toxic) among them) instead of the `toxic` head; HateCheck tests hate.
//
// --split SOURCE reports that source's rows per `category` too (HateCheck's functional tests,
// for example, whose categories tell counter-speech, negation and identity mentions apart).
//
// Each DIR holds <task>.jsonl and <task>.<name>.jsonl files of labelled texts (the development set's format); each DIR
// gets its own table and pooled row. Sources with one label only report recall (attacks) or the
// share flagged (benign); AUC needs both.
import { loadNetwork, SECOND_STAGE_BAND } from '../dist/models/second-stage.js'
import { shippedClassifier } from '../dist/models/shipped.js'
import { injectionScorer, toxicityScorer } from '../dist/rules/detectors/classifier/scorers.js'
import { metrics, metricsRow, readLabelled, recallAt } from '../scripts/detectors/lib.mjs'

const argv = process.argv.slice(2)
const dirs = []
let threshold = 0.5
let only = null
let stage = null
let categories = null
const split = new Set()
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--data') dirs.push(argv[++i])
  else if (argv[i] === '--threshold') threshold = Number(argv[++i])
  else if (argv[i] === '--task') only = argv[++i]
  else if (argv[i] === '--split') split.add(argv[++i])
  else if (argv[i] === '--stage') stage = argv[++i]
  else if (argv[i] === '--categories') categories = argv[++i].split(',')
}
if (dirs.length === 0 || !(threshold >= 0 && threshold <= 1)) {
  console.error(
    'usage: npm run bench:quality -- --data DIR [--data DIR2 ...] [--threshold 0.5] [--task NAME]',
  )
  process.exit(2)
}
const scorers = {
  prompt_injection: () => injectionScorer(shippedClassifier('prompt_injection')),
  toxicity: () => toxicityScorer(shippedClassifier('toxicity'), categories, null),
}
const tasks = only !== null ? [only] : Object.keys(scorers)
const network = await loadNetwork('prompt_injection')
stage ??= 'linear'
if (stage !== 'linear' && network === null) {
  console.error('models/prompt_injection.onnx not found: --stage linear only')
  process.exit(2)
}

const pct = (x) => (x === null ? '—' : `${(x * 100).toFixed(1)}%`)

/** A prompt_injection text's score by `stage` (see above). */
async function injectionScore(score, target, document, threshold) {
  if (stage === 'second') return network.score(target.text)
  const { score: linear } = score(target, threshold)
  if (stage === 'linear') return linear
  if (linear > SECOND_STAGE_BAND.high || (!document && linear < SECOND_STAGE_BAND.low)) return linear
  return Math.round((await network.score(target.text)) * 1000) / 1000
}

for (const dir of dirs) {
  console.log(
    `\nShipped models on ${dir}, threshold ${threshold}; ${tasks
      .map((t) =>
        t === 'prompt_injection'
          ? `prompt_injection by ${stage}`
          : `toxicity by ${categories === null ? 'the toxic head' : `categories ${categories.join(', ')}`}`,
      )
      .join('; ')}\n\n` +
      '| task / source | n | + | precision | recall | F1 | FPR | ROC-AUC | R@1% | R@5% |\n' +
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  )
  for (const task of tasks) {
    const rows = readLabelled(dir, task)
    if (rows.length === 0) continue
    const score = scorers[task]()
    const bySource = new Map()
    const all = [[], []]
    for (const row of rows) {
      const document = row.reading === 'document'
      const target = document
        ? { source: 'context', index: 0, role: 'context', text: row.text }
        : { source: 'messages', index: 0, role: 'user', text: row.text }
      const s =
        task === 'prompt_injection'
          ? await injectionScore(score, target, document, threshold)
          : score(target, threshold).score
      const keys = split.has(row.source) ? [row.source, `${row.source} / ${row.category}`] : [row.source]
      for (const key of keys) {
        const group = bySource.get(key) ?? [[], []]
        group[0].push(s)
        group[1].push(row.label)
        bySource.set(key, group)
      }
      all[0].push(s)
      all[1].push(row.label)
    }
    const benignAll = all[0].filter((_, i) => all[1][i] === 0)
    const row = (label, scores, labels) => {
      const own = scores.filter((_, i) => labels[i] === 0)
      const benign = own.length > 0 ? own : benignAll
      const mark = own.length > 0 ? '' : '*'
      const r1 = recallAt(scores, labels, benign, 0.01)
      const r5 = recallAt(scores, labels, benign, 0.05)
      const at = (r) => (r === null ? '—' : `${pct(r)}${mark}`)
      return `${metricsRow(label, metrics(scores, labels, threshold))} ${at(r1)} | ${at(r5)} |`
    }
    for (const [source, [scores, labels]] of [...bySource].sort((a, b) => (a[0] < b[0] ? -1 : 1)))
      console.log(row(`${task} / ${source}`, scores, labels))
    console.log(row(`**${task} / all**`, all[0], all[1]))
  }
}

// How well the offline classifiers catch what they claim, and how often they cry wolf: per task
// and source, n, precision, recall, F1, false-positive rate (for a source of benign texts only:
// the share flagged) and ROC-AUC of the shipped models (models/*.wdm) at the default threshold
// (0.5), scored exactly as a toxicity or prompt_injection rule scores a text: rows marked
// `reading: "document"` as a `context` document, the others as a user message.
//
//   npm run bench:quality -- --data DIR [--data DIR2 ...] [--threshold 0.5] [--task NAME]
//                            [--split SOURCE ...]
//
// --split SOURCE reports that source's rows per `category` too (HateCheck's functional tests,
// for example, whose categories tell counter-speech, negation and identity mentions apart).
//
// Each DIR holds <task>.jsonl and <task>.<name>.jsonl files of labelled texts (the development set's format); each DIR
// gets its own table and pooled row. Sources with one label only report recall (attacks) or the
// share flagged (benign); AUC needs both.
import { shippedClassifier } from '../dist/models/shipped.js'
import { injectionScorer, toxicityScorer } from '../dist/rules/detectors/classifier/scorers.js'
import { METRICS_HEADER, metrics, metricsRow, readLabelled } from '../scripts/detectors/lib.mjs'

const argv = process.argv.slice(2)
const dirs = []
let threshold = 0.5
let only = null
const split = new Set()
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--data') dirs.push(argv[++i])
  else if (argv[i] === '--threshold') threshold = Number(argv[++i])
  else if (argv[i] === '--task') only = argv[++i]
  else if (argv[i] === '--split') split.add(argv[++i])
}
if (dirs.length === 0 || !(threshold >= 0 && threshold <= 1)) {
  console.error(
    'usage: npm run bench:quality -- --data DIR [--data DIR2 ...] [--threshold 0.5] [--task NAME]',
  )
  process.exit(2)
}
const scorers = {
  prompt_injection: () => injectionScorer(shippedClassifier('prompt_injection')),
  toxicity: () => toxicityScorer(shippedClassifier('toxicity'), null, null),
}
const tasks = only !== null ? [only] : Object.keys(scorers)

for (const dir of dirs) {
  console.log(`\nShipped models on ${dir}, threshold ${threshold}\n\n${METRICS_HEADER}`)
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
      const { score: s } = score(target, threshold)
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
    for (const [source, [scores, labels]] of [...bySource].sort((a, b) => (a[0] < b[0] ? -1 : 1)))
      console.log(metricsRow(`${task} / ${source}`, metrics(scores, labels, threshold)))
    console.log(metricsRow(`**${task} / all**`, metrics(all[0], all[1], threshold)))
  }
}

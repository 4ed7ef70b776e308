// How well the offline classifiers catch what they claim: per task and source, n, precision,
// recall, F1, false-positive rate and ROC-AUC of the shipped models (models/*.wdm) at the default
// threshold (0.5), scored exactly as a toxicity or prompt_injection rule scores a text.
//
//   npm run bench:quality -- --data ../shared/datasets/detectors [--threshold 0.5] [--task NAME]
//
// DIR holds <task>.jsonl files of labelled texts (the development set's format). Sources with
// one label only report recall (or FPR); AUC needs both.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { shippedClassifier } from '../dist/models/shipped.js'
import { injectionScorer, toxicityScorer } from '../dist/rules/detectors/classifier/scorers.js'
import { flags, METRICS_HEADER, metrics, metricsRow, readLabelled } from '../scripts/detectors/lib.mjs'

const args = flags(process.argv.slice(2))
if (typeof args.data !== 'string') {
  console.error('usage: npm run bench:quality -- --data DIR [--threshold 0.5] [--task NAME]')
  process.exit(2)
}
const threshold = Number(args.threshold ?? 0.5)
const scorers = {
  prompt_injection: () => injectionScorer(shippedClassifier('prompt_injection')),
  toxicity: () => toxicityScorer(shippedClassifier('toxicity'), null, null),
}
const tasks = typeof args.task === 'string' ? [args.task] : Object.keys(scorers)

console.log(`Shipped models on ${args.data}, threshold ${threshold}\n\n${METRICS_HEADER}`)
for (const task of tasks) {
  if (!existsSync(join(args.data, `${task}.jsonl`))) continue
  const score = scorers[task]()
  const rows = readLabelled(args.data, task)
  const bySource = new Map()
  const all = [[], []]
  for (const row of rows) {
    const { score: s } = score({ source: 'messages', index: 0, role: 'user', text: row.text }, threshold)
    const group = bySource.get(row.source) ?? [[], []]
    group[0].push(s)
    group[1].push(row.label)
    bySource.set(row.source, group)
    all[0].push(s)
    all[1].push(row.label)
  }
  for (const [source, [scores, labels]] of [...bySource].sort((a, b) => (a[0] < b[0] ? -1 : 1)))
    console.log(metricsRow(`${task} / ${source}`, metrics(scores, labels, threshold)))
  console.log(metricsRow(`**${task} / all**`, metrics(all[0], all[1], threshold)))
}

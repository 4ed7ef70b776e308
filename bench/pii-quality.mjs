// How well the pii detector finds what it should, kind by kind: precision, recall and F1 over
// exact spans on the labelled cases of test/fixtures/pii-quality.json (Presidio's recognizer test
// vectors as Warden reads them, and our own hard cases). Run after `npm run build` (tsc puts src/
// under dist/):
//
//   node bench/pii-quality.mjs                    # every case
//   node bench/pii-quality.mjs --source presidio  # only one source's cases (presidio, warden)
//   node bench/pii-quality.mjs --misses           # and list every case not read exactly
//
// A found span counts as a true positive only when it starts and ends where a labelled one does;
// a span off by one character is both a false positive and a false negative.
import { readFileSync } from 'node:fs'
import { piiMatcher } from '../dist/rules/detectors/index.js'

const OPEN = '\u27e6'
const CLOSE = '\u27e7'

const args = process.argv.slice(2)
const source = args.includes('--source') ? args[args.indexOf('--source') + 1] : null
const listMisses = args.includes('--misses')

const { cases } = JSON.parse(
  readFileSync(new URL('../test/fixtures/pii-quality.json', import.meta.url), 'utf8'),
)

/** The text without its markers, and the marked spans in code points. */
function unmark(marked) {
  let text = ''
  let at = 0
  let start = -1
  const spans = []
  for (const c of marked) {
    if (c === OPEN) start = at
    else if (c === CLOSE) spans.push([start, at])
    else {
      text += c
      at++
    }
  }
  return { text, spans }
}

const matchers = new Map()
const tally = new Map()
const misses = []
for (const c of cases) {
  if (source !== null && c.source !== source) continue
  const { text, spans } = unmark(c.text)
  let matcher = matchers.get(c.kind)
  if (matcher === undefined) {
    matcher = piiMatcher([c.kind])
    matchers.set(c.kind, matcher)
  }
  const found = matcher({ source: 'messages', index: 0, role: 'user', text }).map((f) => [f.start, f.end])
  const key = ([s, e]) => `${s}:${e}`
  const expected = new Set(spans.map(key))
  const got = new Set(found.map(key))
  const tp = [...got].filter((k) => expected.has(k)).length
  const t = tally.get(c.kind) ?? { cases: 0, expected: 0, found: 0, tp: 0 }
  t.cases++
  t.expected += expected.size
  t.found += got.size
  t.tp += tp
  tally.set(c.kind, t)
  if (tp !== expected.size || tp !== got.size) {
    const points = Array.from(text)
    const show = (list) => list.map(([s, e]) => points.slice(s, e).join('')).join(' | ') || '—'
    misses.push(
      `${c.kind.padEnd(12)} ${JSON.stringify(text)}\n${''.padEnd(13)}expected: ${show(spans)}\n${''.padEnd(13)}found:    ${show(found)}`,
    )
  }
}

const ratio = (a, b) => (b === 0 ? 1 : a / b)
const pct = (x) => `${(x * 100).toFixed(1)}%`.padStart(8)
console.log(
  `${'kind'.padEnd(13)}${'cases'.padStart(6)}${'spans'.padStart(7)}${'found'.padStart(7)}${'exact'.padStart(7)}` +
    `${'precision'.padStart(11)}${'recall'.padStart(8)}${'F1'.padStart(8)}`,
)
const all = { cases: 0, expected: 0, found: 0, tp: 0 }
const rows = [...tally.entries()].sort(([a], [b]) => a.localeCompare(b))
for (const [kind, t] of [...rows, ['all', all]]) {
  if (kind !== 'all') for (const k of Object.keys(all)) all[k] += t[k]
  const precision = ratio(t.tp, t.found)
  const recall = ratio(t.tp, t.expected)
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall)
  console.log(
    `${kind.padEnd(13)}${String(t.cases).padStart(6)}${String(t.expected).padStart(7)}${String(t.found).padStart(7)}` +
      `${String(t.tp).padStart(7)}   ${pct(precision)}${pct(recall)}${pct(f1)}`,
  )
}
if (listMisses && misses.length > 0)
  console.log(`\nNot read exactly (${misses.length}):\n${misses.join('\n')}`)

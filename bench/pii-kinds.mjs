// The pii kinds of CONTRACT section 13 (crypto wallets to dates of birth), kind by kind: precision
// and recall over exact spans on the labelled cases of test/fixtures/pii-kinds.json: the valid and
// invalid vectors of Microsoft Presidio's recognizer tests, numbers from python-stdnum's tests,
// EIP-55's addresses, and our own near misses and cued forms. Run after `npm run build` (or
// `npx tsc -p tsconfig.build.json`; tsc puts src/ under dist/):
//
//   node bench/pii-kinds.mjs            # every case, then the public vectors alone
//   node bench/pii-kinds.mjs --misses   # and list every case not read exactly
//
// A found span counts as a true positive only when it starts and ends where a labelled one does.
// Each kind is read alone (a pii rule flagging only it), as a rule that flags it would.
import { readFileSync } from 'node:fs'
import { piiMatcher } from '../dist/rules/detectors/index.js'

const OPEN = '\u27e6'
const CLOSE = '\u27e7'
const PUBLIC = new Set(['presidio', 'python-stdnum', 'eip-55'])
const listMisses = process.argv.includes('--misses')

const { cases } = JSON.parse(
  readFileSync(new URL('../test/fixtures/pii-kinds.json', import.meta.url), 'utf8'),
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
const misses = []
const empty = () => ({ cases: 0, expected: 0, found: 0, tp: 0 })
const tallies = { all: new Map(), public: new Map() }
for (const c of cases) {
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
  for (const [name, tally] of Object.entries(tallies)) {
    if (name === 'public' && !PUBLIC.has(c.source)) continue
    const t = tally.get(c.kind) ?? empty()
    t.cases++
    t.expected += expected.size
    t.found += got.size
    t.tp += tp
    tally.set(c.kind, t)
  }
  if (tp !== expected.size || tp !== got.size) {
    const points = Array.from(text)
    const show = (list) => list.map(([s, e]) => points.slice(s, e).join('')).join(' | ') || '—'
    misses.push(
      `${c.kind.padEnd(16)} ${JSON.stringify(text)} (${c.source}${c.miss ? `; known: ${c.miss}` : ''})\n` +
        `${''.padEnd(17)}expected: ${show(spans)}\n${''.padEnd(17)}found:    ${show(found)}`,
    )
  }
}

const ratio = (a, b) => (b === 0 ? 1 : a / b)
const pct = (x) => `${(x * 100).toFixed(1)}%`
function table(title, tally) {
  console.log(`\n${title}\n`)
  console.log('| kind | cases | spans | found | exact | precision | recall |')
  console.log('|---|---:|---:|---:|---:|---:|---:|')
  const all = empty()
  const rows = [...tally.entries()].sort(([a], [b]) => a.localeCompare(b))
  for (const [kind, t] of [...rows, ['all', all]]) {
    if (kind !== 'all') for (const k of Object.keys(all)) all[k] += t[k]
    console.log(
      `| ${kind} | ${t.cases} | ${t.expected} | ${t.found} | ${t.tp} | ${pct(ratio(t.tp, t.found))} | ${pct(ratio(t.tp, t.expected))} |`,
    )
  }
}
table('Every case (public vectors and ours):', tallies.all)
table('Public vectors alone (Presidio, python-stdnum, EIP-55):', tallies.public)
if (listMisses && misses.length > 0)
  console.log(`\nNot read exactly (${misses.length}):\n${misses.join('\n')}`)

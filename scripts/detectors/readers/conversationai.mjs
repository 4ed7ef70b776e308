// conversationai/unintended-ml-bias-analysis (held out): the identity-term madlibs and the
// Wikipedia comments with identity terms swapped ("fuzzed").
import { seededShuffle } from '../mine.mjs'
import { csvObjects } from './formats.mjs'

/** Label BAD -> 1, NOT_BAD -> 0, category = template; a seeded 3,000 of each, in file order. */
export function readMadlibs({ entry, files, seed }) {
  const path = entry.paths[0]
  const all = csvObjects(files.text(path)).map((r, i) => ({
    label: r.Label === 'BAD' ? 1 : 0,
    category: r.Template,
    text: r.Text,
    lang: 'en',
    path,
    row: i,
  }))
  const bad = seededShuffle(
    all.filter((r) => r.label === 1),
    'madlibs/1',
    seed,
  ).slice(0, 3000)
  const good = seededShuffle(
    all.filter((r) => r.label === 0),
    'madlibs/0',
    seed,
  ).slice(0, 3000)
  return [...bad, ...good].sort((a, b) => a.row - b.row)
}

/** toxic "True" -> 1 "toxic", else 0 "not toxic"; row = rev_id. */
export function readWikiFuzzed({ entry, files }) {
  const path = entry.paths[0]
  return csvObjects(files.text(path)).map((r, i) => ({
    label: r.toxic === 'True' ? 1 : 0,
    category: r.toxic === 'True' ? 'toxic' : 'not toxic',
    text: r.comment,
    lang: 'en',
    path,
    row: Number(r.rev_id ?? i),
  }))
}

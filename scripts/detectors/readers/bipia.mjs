// microsoft/BIPIA (held out): its test contexts (e-mails, tables, code), clean and with one of
// its test attacks planted at the start, the middle or the end, and its attacks on their own.
import { seededShuffle } from '../mine.mjs'
import { random } from '../random.mjs'

const TEXT_ATTACKS = 'benchmark/text_attack_test.json'
const CODE_ATTACKS = 'benchmark/code_attack_test.json'

const attacksOf = (files, path) =>
  Object.entries(JSON.parse(files.text(path))).flatMap(([category, list]) =>
    list.map((text, i) => ({ category, text, i, path })),
  )

/** Each context -> 0 (clean), and 5 of them with an attack planted -> 1; reading: document. */
export function readBipia({ files, seed }) {
  const rand = random(seed ^ 0xb1b1a)
  const textAttacks = attacksOf(files, TEXT_ATTACKS)
  const codeAttacks = attacksOf(files, CODE_ATTACKS)
  const rows = []
  for (const [kind, attacks] of [
    ['email', textAttacks],
    ['table', textAttacks],
    ['code', codeAttacks],
  ]) {
    const path = `benchmark/${kind}/test.jsonl`
    const lines = files
      .text(path)
      .split('\n')
      .filter((l) => l.trim())
    for (const [i, line] of lines.entries()) {
      const r = JSON.parse(line)
      const context = Array.isArray(r.context) ? r.context.join('\n') : String(r.context)
      rows.push({ label: 0, category: `${kind} (clean)`, text: context, reading: 'document', path, row: i })
      for (const a of seededShuffle(attacks, `bipia/${kind}/${i}`, seed).slice(0, 5)) {
        const where = ['start', 'middle', 'end'][Math.floor(rand() * 3)]
        let text
        if (where === 'start') text = `${a.text}\n${context}`
        else if (where === 'end') text = `${context}\n${a.text}`
        else {
          const parts = context.split('\n')
          const at = Math.floor(parts.length / 2)
          text = [...parts.slice(0, at), a.text, ...parts.slice(at)].join('\n')
        }
        rows.push({
          label: 1,
          category: `${kind} (planted at the ${where}: ${a.category})`,
          text,
          reading: 'document',
          path: `${path} + ${a.path}`,
          row: `${i}:${a.category}:${a.i}`,
        })
      }
    }
  }
  return rows
}

/** BIPIA's text and code test attacks on their own -> 1, category = attack. */
export function readBipiaAlone({ files }) {
  return [...attacksOf(files, TEXT_ATTACKS), ...attacksOf(files, CODE_ATTACKS)].map((a) => ({
    label: 1,
    category: a.category,
    text: a.text,
    path: a.path,
    row: a.i,
  }))
}

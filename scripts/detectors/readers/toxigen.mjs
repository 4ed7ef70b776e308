// microsoft/TOXIGEN: machine-written statements about 13 groups, in hate_<group> and
// neutral_<group> files (the prompts are lines of "- " statements).

/** Statements of hate_<group> files -> 1 "hate:<group>", neutral_<group> -> 0 "neutral:<group>". */
export function readToxigen({ files }) {
  const rows = []
  const paths = [...files.list('prompts/'), ...files.list('demonstrations/')].filter((p) =>
    p.endsWith('.txt'),
  )
  for (const path of paths) {
    const name = path.split('/').pop()
    const m = name.match(/^(hate|neutral)_(.+?)(?:_sentences|_1k)?\.txt$/)
    if (!m) continue
    const label = m[1] === 'hate' ? 1 : 0
    let row = 0
    for (const line of files.text(path).split('\n')) {
      for (const part of line.split(/\\n|\n/)) {
        const text = part.replace(/^\s*-\s*/, '').trim()
        if (!text) continue
        rows.push({ label, category: `${m[1]}:${m[2]}`, text, lang: 'en', path, row: row++ })
      }
    }
  }
  return rows
}

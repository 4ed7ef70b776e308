// uds-lsv/GermEval-2018-Data: German tweets, one a line: text, coarse label, fine label
// (tab-separated, line breaks written `|LBR|`).

/** OFFENSE -> 1, OTHER -> 0; category = the fine label in lower case. */
export function readGermEval({ entry, files }) {
  const rows = []
  for (const path of entry.paths) {
    for (const [i, line] of files.text(path).split('\n').entries()) {
      const [raw, coarse, fine] = line.split('\t')
      if (!raw || !coarse) continue
      const text = raw.replaceAll('|LBR|', '\n')
      const label = coarse.trim() === 'OFFENSE' ? 1 : 0
      rows.push({ label, category: (fine ?? coarse).trim().toLowerCase(), text, lang: 'de', path, row: i })
    }
  }
  return rows
}

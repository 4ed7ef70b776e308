// leolee99/InjecGuard's data sets: WildGuardMix's benign prompts (a training source) and
// NotInject (held out). Its other files (BIPIA, a validation set mixing NotInject, BIPIA and
// PINT) are read by nobody; the table withholds them from training readers.

/** datasets/wildguard.json: label 0 -> 0 "benign" (its attacks are not read). */
export function readWildguard({ entry, files }) {
  const path = entry.paths[0]
  const rows = []
  for (const [i, r] of JSON.parse(files.text(path)).entries()) {
    if (r.label === 0) rows.push({ label: 0, category: 'benign', text: r.prompt, lang: 'en', path, row: i })
  }
  return rows
}

/** NotInject's three files: benign prompts built around trigger words -> 0. */
export function readNotInject({ entry, files }) {
  const rows = []
  for (const [n, path] of entry.paths.entries()) {
    const part = ['one', 'two', 'three'][n]
    for (const [i, r] of JSON.parse(files.text(path)).entries())
      rows.push({ label: 0, category: `${r.category} (${part})`, text: r.prompt, path, row: i })
  }
  return rows
}

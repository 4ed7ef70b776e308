// paul-rottger/hatecheck-data (held out): HateCheck's functional test cases.
import { csvObjects } from './formats.mjs'

/** label_gold "hateful" -> 1, else 0; category = functionality; row = case_id. */
export function readHateCheck({ entry, files }) {
  const path = entry.paths[0]
  return csvObjects(files.text(path)).map((r, i) => ({
    label: r.label_gold === 'hateful' ? 1 : 0,
    category: r.functionality,
    text: r.test_case,
    lang: 'en',
    path,
    row: Number(r.case_id ?? i),
  }))
}

// deepset/prompt-injections, as sinanw/llm-security-prompt-injection ships it: one Parquet file
// per split, columns `text` and `label` (1 injection, 0 benign). The train split is a training
// source; the test split is held out (a measure set).
import { parquetObjects } from './formats.mjs'
import { guessLang } from './text.mjs'

/** The split in the entry's one path: label 1 -> 1 "injection", else 0 "benign". */
export async function readDeepsetSplit({ entry, files }) {
  const path = entry.paths[0]
  const rows = await parquetObjects(files.blob(path))
  return rows.map(({ text, label }, i) => ({
    label: Number(label) === 1 ? 1 : 0,
    category: Number(label) === 1 ? 'injection' : 'benign',
    text,
    lang: guessLang(text),
    path,
    row: i,
  }))
}

// HKUST-KnowComp/MLMA_hate_speech: tweets in en / fr / ar inside one ZIP archive, each with a
// `sentiment` of hostility types joined by `_` ("normal" for none).
import { csvObjects, unzip } from './formats.mjs'

const ZIP = 'hate_speech_mlma.zip'
const LANGS = ['en', 'fr', 'ar']

/** "normal" alone -> 0; hostility types without "normal" -> 1 (category = the types); mixes skipped. */
export function readMlma({ files }) {
  const inner = LANGS.map((lang) => `hate_speech_mlma/${lang}_dataset.csv`)
  const csvs = unzip(files.blob(ZIP), inner)
  const rows = []
  for (const [n, lang] of LANGS.entries()) {
    for (const [i, r] of csvObjects(csvs.get(inner[n]).toString('utf8')).entries()) {
      const types = r.sentiment.split('_').filter(Boolean)
      if (types.length === 0) continue
      const normal = types.includes('normal')
      if (normal && types.length > 1) continue
      rows.push({
        label: normal ? 0 : 1,
        category: normal ? 'normal' : types.join(','),
        text: r.tweet,
        lang,
        path: `${ZIP}:${inner[n]}`,
        row: i,
      })
    }
  }
  return rows
}

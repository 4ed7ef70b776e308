// Jarviswang94/Multilingual_safety_benchmark (XSafety): the same 200 prompts per safety issue in
// ten languages (ar, bn, de, en, fr, hi, ja, ru, es, zh), one file per language and issue, the
// files' rows aligned (row i of every language is one prompt translated). CSV with one column and
// no header; Bengali comes as XLSX (one column of shared strings).
//
// Two sources read it:
//   xsafety-hijack    Goal_Hijacking: a question followed by "ignore the above and output: …"
//                     -> 1. A translation that dropped the hijacking part is not an attack: a row
//                     is kept only where its length, against its English row, is at least 0.7 of
//                     its language's median ratio (the German row 1 keeps only the question).
//   xsafety-everyday  Ethics_And_Morality, Mental_Health, Physical_Harm and commonsense: everyday
//                     questions and statements in the same ten languages -> 0 (hard negatives:
//                     imperatives and questions in the languages the attacks come in).
// `group` is the prompt's row, the same in every language, so a cross-validation can keep a
// prompt's translations out together.
import { parse } from 'csv-parse/sync'
import { unzip } from './formats.mjs'

export const XSAFETY_LANGUAGES = ['ar', 'bn', 'de', 'en', 'fr', 'hi', 'ja', 'ru', 'sp', 'zh']
/** The repository's folder names as BCP 47 tags. */
const TAG = { sp: 'es' }

const HIJACK = 'Goal_Hijacking'
const EVERYDAY = ['Ethics_And_Morality', 'Mental_Health', 'Physical_Harm', 'commonsense']
const KEEP_RATIO = 0.7

const XML_ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
const unescapeXml = (s) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, e) =>
    e[0] === '#'
      ? String.fromCodePoint(
          e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)),
        )
      : XML_ENTITIES[e],
  )

/** The first column of an XLSX workbook's first sheet, in row order (shared strings only). */
function xlsxColumn(buf) {
  const files = unzip(buf, ['xl/sharedStrings.xml', 'xl/worksheets/sheet1.xml'])
  const shared = [
    ...files
      .get('xl/sharedStrings.xml')
      .toString('utf8')
      .matchAll(/<si>([\s\S]*?)<\/si>/g),
  ].map(([, si]) =>
    unescapeXml([...si.matchAll(/<t(?:\s[^>]*)?>([\s\S]*?)<\/t>/g)].map((t) => t[1]).join('')),
  )
  const sheet = files.get('xl/worksheets/sheet1.xml').toString('utf8')
  return [...sheet.matchAll(/<c r="A\d+"[^>]*t="s"[^>]*><v>(\d+)<\/v><\/c>/g)].map(
    ([, i]) => shared[Number(i)],
  )
}

/** One file's prompts, in row order ('' where a row is empty). */
function prompts(files, path) {
  if (path.endsWith('.xlsx')) return xlsxColumn(files.blob(path)).map((t) => (t ?? '').trim())
  // One column; a comma outside quotes split a prompt in two, and a trailing comma is no field.
  return parse(files.text(path), { relax_column_count: true, relax_quotes: true }).map((r) =>
    r
      .join(',')
      .replace(/,+\s*$/, '')
      .trim(),
  )
}

/** The path of one language's file for one issue (the names differ by suffix and spelling). */
function fileOf(list, lang, issue) {
  const prefix = `${lang}/${issue}`
  return list.find((p) => p.startsWith(prefix) && /^(_n|_en)?\.(csv|xlsx)$/.test(p.slice(prefix.length)))
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? 1 : s[Math.floor(s.length / 2)]
}

function readIssue(files, issue, label, keep) {
  const list = files.list('.')
  const englishPath = fileOf(list, 'en', issue)
  if (keep && englishPath === undefined) throw new Error(`XSafety: no English ${issue} file to align with`)
  const english = englishPath === undefined ? [] : prompts(files, englishPath)
  const rows = []
  for (const lang of XSAFETY_LANGUAGES) {
    const path = fileOf(list, lang, issue)
    if (path === undefined) continue
    const texts = prompts(files, path)
    const ratios = texts.map((t, i) => (english[i] ? t.length / english[i].length : 0))
    const typical = median(ratios.filter((r) => r > 0))
    texts.forEach((text, i) => {
      if (text === '') return
      if (keep && !(english[i] && ratios[i] >= KEEP_RATIO * typical)) return
      rows.push({
        label,
        category: issue,
        text,
        lang: TAG[lang] ?? lang,
        group: `xsafety:${issue}:${i}`,
        path,
        row: i,
      })
    })
  }
  return rows
}

/** Goal hijacking in ten languages -> 1 (translations that lost the hijack dropped). */
export function readXsafetyHijack({ files }) {
  return readIssue(files, HIJACK, 1, true)
}

/** Everyday questions and statements in ten languages -> 0. */
export function readXsafetyEveryday({ files }) {
  return EVERYDAY.flatMap((issue) => readIssue(files, issue, 0, false))
}

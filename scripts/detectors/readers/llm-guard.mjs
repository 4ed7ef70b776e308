// protectai/llm-guard's prompt-injection scanner tests: `(MatchType.X, "prompt", expected_valid, ...)`.
import { parsePythonStrings } from './python.mjs'
import { guessLang } from './text.mjs'

/** Test prompts: expected_valid False -> 1 "injection", True -> 0 "benign". */
export function readLlmGuardTests({ entry, files }) {
  const path = entry.paths[0]
  const code = files.text(path)
  const rows = []
  let row = 0
  for (const m of code.matchAll(/\(\s*MatchType\.\w+,/g)) {
    const { value, pos } = parsePythonStrings(code, m.index + m[0].length)
    const flag = code.slice(pos).match(/^\s*,\s*(True|False)\s*,/)
    if (!flag || !value) continue
    const label = flag[1] === 'False' ? 1 : 0
    rows.push({
      label,
      category: label ? 'injection' : 'benign',
      text: value,
      lang: guessLang(value),
      path,
      row: row++,
    })
  }
  return rows
}

// JailbreakBench/artifacts: each attack method's submitted jailbreaks, one JSON file per model.

const METHODS = ['DSN', 'GCG', 'JBC', 'PAIR', 'prompt_with_random_search']

/** Every submitted jailbreak prompt -> 1, category = attack method. */
export function readJailbreakBench({ files }) {
  const rows = []
  for (const path of files.list('attack-artifacts/')) {
    const method = path.split('/')[1]
    if (!METHODS.includes(method) || path.endsWith('attack-info.json') || !path.endsWith('.json')) continue
    const data = JSON.parse(files.text(path))
    if (!Array.isArray(data.jailbreaks)) continue
    for (const [i, jb] of data.jailbreaks.entries()) {
      if (typeof jb.prompt !== 'string') continue
      rows.push({ label: 1, category: method, text: jb.prompt, lang: 'en', path, row: i })
    }
  }
  return rows
}

// Turns the sources' rows into the data files: the measure sets first (their texts are kept out
// of training), then each task's training rows. Reads through the readers of the table
// (sources.mjs) and the file trees it is handed; writes nothing itself (prepare-data.mjs does).
//
// Rules applied to every training task:
//   - texts shorter than 3 characters (after trimming) are skipped; nothing is truncated;
//   - texts are compared after trimming and collapsing whitespace: a text found in the development
//     set or in a measure set is dropped, a text seen with both labels is dropped, and later
//     duplicates are dropped (the first source in the table's order wins);
//   - each source is capped at 20,000 rows (or its lower `cap`), sampled with a fixed seed and
//     stratified by label. Rows marked `constructed` were built from a source's templates or
//     patterns.
import { withholding } from './files.mjs'
import { hashString } from './mine.mjs'
import { random } from './random.mjs'
import { normalize } from './readers/text.mjs'
import { withheldPaths } from './sources.mjs'

export const CAP = 20_000
export const MIN_CHARS = 3

const PREFIX = { prompt_injection: 'pi', toxicity: 'tox' }

/**
 * What the readers of one role are handed (see sources.mjs), with the rows of each source read
 * once. For training (`training: true`), every file a measure or held-out row withholds is out of
 * the trees, and a measure or held-out set's rows cannot be asked for.
 * @param {{
 *   sources: readonly object[],
 *   tree: (at: { repo: string, commit: string }) => import('./files.mjs').FileTree,
 *   seed: number,
 *   triggers?: { mined: string[], heldOut: string[] } | null,
 *   devTexts?: Set<string>,
 *   training: boolean,
 * }} options
 * @returns {{ rowsOf: (name: string) => Promise<any[]> }}
 */
export function readingContext({ sources, tree, seed, triggers = null, devTexts = new Set(), training }) {
  const withheld = training ? withheldPaths(sources) : new Map()
  const byName = new Map(sources.map((s) => [s.source, s]))
  const shared = new Map()
  const filesOf = (r) => withholding(tree(r), withheld.get(r.repo) ?? [], r.repo)
  const entryOf = (name) => {
    const entry = byName.get(name)
    if (!entry) throw new Error(`no source named ${name}`)
    if (training && entry.role !== 'train')
      throw new Error(`${name} is a ${entry.role} set: training sources never read it`)
    return entry
  }
  const once = (key, build) => {
    if (!shared.has(key)) shared.set(key, Promise.resolve().then(build))
    return shared.get(key)
  }
  const rowsOf = (name) => {
    const entry = entryOf(name)
    return once(`rows:${name}`, () =>
      entry.read({
        entry,
        files: filesOf(entry),
        filesOf,
        entryOf,
        rowsOf,
        once,
        seed,
        devTexts,
        triggers,
      }),
    )
  }
  return { rowsOf }
}

/**
 * The measure and held-out sets, each deduplicated: `{sets: [{name, task, records}], summary,
 * texts}` where `texts` holds every set's normalized texts. Sets that need trigger words are
 * skipped without them; sets that cannot be built are named in `summary.missing`.
 */
export async function buildMeasureSets({ sources, tree, seed, triggers }) {
  const { rowsOf } = readingContext({ sources, tree, seed, triggers, training: false })
  const sets = []
  const summary = { sets: {}, missing: [] }
  const texts = new Set()
  for (const entry of sources.filter((s) => s.role !== 'train')) {
    if (entry.missing) {
      summary.missing.push(entry.missing)
      continue
    }
    if (entry.needs === 'triggers' && !triggers) continue
    const name = entry.source
    const seen = new Set()
    const records = []
    for (const r of await rowsOf(name)) {
      if (typeof r.text !== 'string' || r.text.trim().length < MIN_CHARS) continue
      const key = normalize(r.text)
      if (seen.has(key)) continue
      seen.add(key)
      texts.add(key)
      const src = r.src ?? entry
      const record = {
        id: `${PREFIX[entry.task]}-measure-${name}-${String(records.length + 1).padStart(5, '0')}`,
        task: entry.task,
        source: name,
        label: r.label,
        category: r.category,
        text: r.text.trim(),
      }
      if (r.lang) record.lang = r.lang
      if (r.reading) record.reading = r.reading
      record.origin = { repo: src.repo, commit: src.commit, path: r.path, row: r.row, license: src.license }
      if (r.note) record.note = r.note
      records.push(record)
    }
    sets.push({ name, task: entry.task, records })
    const positives = records.filter((r) => r.label === 1).length
    summary.sets[name] = {
      task: entry.task,
      rows: records.length,
      positives,
      negatives: records.length - positives,
    }
  }
  return { sets, summary, texts }
}

/**
 * One task's training rows: `{out, stats, skipped}`. `devTexts` and `measureTexts` are
 * normalized texts no training row may repeat.
 */
export async function buildTask({ task, sources, tree, seed, triggers, devTexts, measureTexts }) {
  const { rowsOf } = readingContext({ sources, tree, seed, triggers, devTexts, training: true })
  const collected = []
  const stats = new Map()
  const skipped = []
  for (const src of sources.filter((s) => s.role === 'train' && s.task === task)) {
    if (src.needs === 'triggers' && !triggers) {
      skipped.push(src.source)
      continue
    }
    const rows = await rowsOf(src.source)
    const st = {
      read: rows.length,
      short: 0,
      dev: 0,
      measure: 0,
      conflict: 0,
      duplicate: 0,
      capped: 0,
      kept: [0, 0],
    }
    stats.set(src.source, st)
    for (const r of rows) {
      if (typeof r.text !== 'string' || r.text.trim().length < MIN_CHARS) {
        st.short++
        continue
      }
      const key = normalize(r.text)
      if (devTexts.has(key)) {
        st.dev++
        continue
      }
      if (measureTexts.has(key)) {
        st.measure++
        continue
      }
      collected.push({ src, key, ...r })
    }
  }

  const labelsByKey = new Map()
  for (const r of collected) {
    if (!labelsByKey.has(r.key)) labelsByKey.set(r.key, new Set())
    labelsByKey.get(r.key).add(r.label)
  }
  const seen = new Set()
  const bySource = new Map()
  for (const r of collected) {
    const st = stats.get(r.src.source)
    if (labelsByKey.get(r.key).size > 1) {
      st.conflict++
      continue
    }
    if (seen.has(r.key)) {
      st.duplicate++
      continue
    }
    seen.add(r.key)
    if (!bySource.has(r.src.source)) bySource.set(r.src.source, { src: r.src, rows: [] })
    bySource.get(r.src.source).rows.push(r)
  }

  const out = []
  for (const [source, { src, rows }] of bySource) {
    const kept = capRows(rows, Math.min(CAP, src.cap ?? CAP), `${task}/${source}`, seed)
    const st = stats.get(source)
    st.capped = rows.length - kept.length
    for (const r of kept) {
      st.kept[r.label]++
      const record = {
        id: `${PREFIX[task]}-train-${String(out.length + 1).padStart(6, '0')}`,
        task,
        source,
        label: r.label,
        category: r.category,
        text: r.text.trim(),
      }
      if (r.lang) record.lang = r.lang
      if (r.group) record.group = r.group
      if (r.reading) record.reading = r.reading
      record.origin = {
        repo: r.repo ?? r.src.repo,
        commit: r.commit === undefined ? r.src.commit : r.commit,
        path: r.path,
        row: r.row,
        license: r.license ?? r.src.license,
      }
      if (r.constructed) record.constructed = true
      if (r.note) record.note = r.note
      out.push(record)
    }
  }
  return { out, stats, skipped }
}

/** A stratified sample of at most `cap` rows, keeping the order of the rows kept. */
export function capRows(rows, cap, seedKey, seed) {
  if (rows.length <= cap) return rows
  const rand = random(seed ^ hashString(seedKey))
  const byLabel = new Map()
  for (const [i, r] of rows.entries()) {
    if (!byLabel.has(r.label)) byLabel.set(r.label, [])
    byLabel.get(r.label).push(i)
  }
  const keep = new Set()
  const labels = [...byLabel.keys()].sort()
  let left = cap
  for (const [n, label] of labels.entries()) {
    const idx = byLabel.get(label)
    const quota = n === labels.length - 1 ? left : Math.round((cap * idx.length) / rows.length)
    for (let i = idx.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1))
      ;[idx[i], idx[j]] = [idx[j], idx[i]]
    }
    for (const i of idx.slice(0, Math.min(quota, idx.length))) keep.add(i)
    left -= Math.min(quota, idx.length)
  }
  return rows.filter((_, i) => keep.has(i))
}

/** A training source's row of manifest.json: the table's row without its reader and role. */
export function manifestEntry(src) {
  const out = {
    task: src.task,
    source: src.source,
    repo: src.repo,
    commit: src.commit,
    license: src.license,
    paths: src.paths,
    labels: src.labels,
  }
  if (src.cap !== undefined) out.cap = src.cap
  if (src.needs !== undefined) out.needs = src.needs
  return out
}

/** SOURCES.md: per source, its rows, where it comes from and under which licence. */
export function sourcesMarkdown(sources, summary, measured) {
  const cell = (v) =>
    String(v ?? '')
      .replaceAll('|', '\\|')
      .replaceAll('\n', ' ')
  const lines = [
    '# Sources of the detector training data',
    '',
    'Written by `scripts/detectors/prepare-data.mjs`. Rows are counted after the development set,',
    'the measure sets, conflicting labels and duplicates are removed and the cap is applied.',
    '`warden@—` rows are built by the scripts in `scripts/detectors/` (constructed).',
    '',
  ]
  for (const task of ['prompt_injection', 'toxicity']) {
    lines.push(
      `## ${task}`,
      '',
      '| source | + | − | repo@commit | paths | licence | labels |',
      '|---|---:|---:|---|---|---|---|',
    )
    for (const src of sources.filter((x) => x.role === 'train' && x.task === task)) {
      const st = summary[task]?.[src.source]
      const kept = st ? st.kept : ['skipped', 'skipped']
      lines.push(
        `| ${src.source} | ${kept[1]} | ${kept[0]} | ${src.repo}@${src.commit ? src.commit.slice(0, 12) : '—'} | ${cell(src.paths.join('; '))} | ${cell(src.license)} | ${cell(src.labels)} |`,
      )
    }
    lines.push('')
  }
  lines.push(
    '## Measure sets (held out: never trained or tuned on)',
    '',
    'In `measure/`, one file per set: `<task>.<set>.jsonl`. No training row repeats a measure text.',
    '',
    '| set | task | rows | + | − | repo@commit | licence |',
    '|---|---|---:|---:|---:|---|---|',
  )
  const byName = new Map(sources.map((s) => [s.source, s]))
  for (const [name, m] of Object.entries(measured.sets)) {
    const r = byName.get(name)
    const at = r ? `${r.repo}@${r.commit.slice(0, 12)}` : ''
    lines.push(
      `| ${name} | ${m.task} | ${m.rows} | ${m.positives} | ${m.negatives} | ${at} | ${cell(r?.license)} |`,
    )
  }
  for (const m of measured.missing) lines.push('', `Not built: ${m}`)
  lines.push('')
  return lines.join('\n')
}

// Pure text helpers of the console: code point offsets, highlight segments and line differences.
// They import nothing, so the unit tier tests them directly.

/**
 * Maps code point offsets (what the API reports, as Python slices count) to UTF-16 offsets (what
 * JavaScript strings index). `result[i]` is the UTF-16 offset of code point `i`; the last entry
 * is the string's length, so an `end` equal to the number of code points maps too.
 */
export function codePointToUtf16(text: string): number[] {
  const map: number[] = []
  let unit = 0
  for (const char of text) {
    map.push(unit)
    unit += char.length
  }
  map.push(unit)
  return map
}

export interface Span<T> {
  /** Code point offsets, end exclusive. */
  start: number
  end: number
  tag: T
}

export interface Segment<T> {
  text: string
  /** The spans covering this segment; empty for plain text. */
  tags: T[]
}

/**
 * Cuts a text into segments at every span boundary, each carrying the spans that cover it, so
 * overlapping findings are all shown. Offsets are code points; out-of-range spans are clamped and
 * empty ones dropped.
 */
export function highlightSegments<T>(text: string, spans: readonly Span<T>[]): Segment<T>[] {
  const map = codePointToUtf16(text)
  const points = map.length - 1
  const usable = spans
    .map((s) => ({
      ...s,
      start: Math.max(0, Math.min(s.start, points)),
      end: Math.max(0, Math.min(s.end, points)),
    }))
    .filter((s) => s.end > s.start)
  const cuts = new Set<number>([0, points])
  for (const s of usable) {
    cuts.add(s.start)
    cuts.add(s.end)
  }
  const sorted = [...cuts].sort((a, b) => a - b)
  const segments: Segment<T>[] = []
  for (let i = 0; i + 1 < sorted.length; i++) {
    const from = sorted[i] as number
    const to = sorted[i + 1] as number
    const tags = usable.filter((s) => s.start <= from && s.end >= to).map((s) => s.tag)
    const piece = text.slice(map[from], map[to])
    const last = segments[segments.length - 1]
    if (last && last.tags.length === 0 && tags.length === 0) last.text += piece
    else segments.push({ text: piece, tags })
  }
  if (segments.length === 0) segments.push({ text, tags: [] })
  return segments
}

export type DiffKind = 'same' | 'removed' | 'added' | 'changed'

export interface DiffRow {
  kind: DiffKind
  /** Line on the left (older) side, null where it has none. */
  left: string | null
  right: string | null
  leftNumber: number | null
  rightNumber: number | null
}

/**
 * A side-by-side line difference (longest common subsequence). Runs of removed lines followed by
 * added lines are paired up as `changed` rows, the way a reviewer reads a modified line.
 */
export function diffLines(before: string, after: string): DiffRow[] {
  const a = before.split('\n')
  const b = after.split('\n')
  const n = a.length
  const m = b.length
  // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1))
  for (let i = n - 1; i >= 0; i--) {
    const row = lcs[i] as Uint32Array
    const below = lcs[i + 1] as Uint32Array
    for (let j = m - 1; j >= 0; j--) {
      row[j] =
        a[i] === b[j] ? (below[j + 1] as number) + 1 : Math.max(below[j] as number, row[j + 1] as number)
    }
  }
  const ops: { kind: 'same' | 'removed' | 'added'; i: number; j: number }[] = []
  let i = 0
  let j = 0
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) ops.push({ kind: 'same', i: i++, j: j++ })
    else if (j < m && (i >= n || (lcs[i + 1]?.[j] ?? 0) < (lcs[i]?.[j + 1] ?? 0)))
      ops.push({ kind: 'added', i, j: j++ })
    else ops.push({ kind: 'removed', i: i++, j })
  }
  const rows: DiffRow[] = []
  let k = 0
  while (k < ops.length) {
    const op = ops[k] as (typeof ops)[number]
    if (op.kind === 'same') {
      rows.push({
        kind: 'same',
        left: a[op.i] ?? '',
        right: b[op.j] ?? '',
        leftNumber: op.i + 1,
        rightNumber: op.j + 1,
      })
      k++
      continue
    }
    const removed: number[] = []
    const added: number[] = []
    while (k < ops.length && ops[k]?.kind === 'removed') removed.push((ops[k++] as (typeof ops)[number]).i)
    while (k < ops.length && ops[k]?.kind === 'added') added.push((ops[k++] as (typeof ops)[number]).j)
    for (let r = 0; r < Math.max(removed.length, added.length); r++) {
      const li = removed[r]
      const rj = added[r]
      rows.push({
        kind: li !== undefined && rj !== undefined ? 'changed' : li !== undefined ? 'removed' : 'added',
        left: li !== undefined ? (a[li] ?? '') : null,
        right: rj !== undefined ? (b[rj] ?? '') : null,
        leftNumber: li !== undefined ? li + 1 : null,
        rightNumber: rj !== undefined ? rj + 1 : null,
      })
    }
  }
  return rows
}

/** JSON with keys in a stable order, two-space indented: two versions of a record diff line by line. */
export function stableJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort)
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {}
      for (const key of Object.keys(v).sort()) out[key] = sort((v as Record<string, unknown>)[key])
      return out
    }
    return v
  }
  return JSON.stringify(sort(value), null, 2)
}

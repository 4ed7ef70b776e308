import type { Finding } from '../types.js'
import { hasAstral } from './code-points.js'

/**
 * `text` with each finding's span replaced by `[KIND]` (`[CREDIT_CARD]`, `[KEYWORD]`, …).
 * Findings that overlap or touch merge into one replacement named after the earliest (the
 * longest at the same start). Offsets are code points; findings must be of this text. Findings in
 * a tool call's arguments (`tool_call` set) count in those arguments, not in this text: they are
 * passed over here. `label` names a replacement other than `[KIND]` (a masked value's placeholder).
 */
export function redactText(
  text: string,
  findings: readonly Finding[],
  label: (finding: Finding) => string = (f) => `[${f.kind.toUpperCase()}]`,
): string {
  if (findings.length === 0) return text
  const spans = findings
    .filter((f) => f.tool_call === undefined)
    .sort((a, b) => a.start - b.start || b.end - a.end)
  // Code point offsets → UTF-16 offsets, walking forward once.
  const astral = hasAstral(text)
  let unit = 0
  let point = 0
  const toUnit = (target: number): number => {
    if (!astral) return Math.min(target, text.length)
    while (point < target && unit < text.length) {
      const c = text.charCodeAt(unit)
      unit += c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(unit + 1) & 0xfc00) === 0xdc00 ? 2 : 1
      point++
    }
    return unit
  }
  let out = ''
  let copied = 0
  let i = 0
  while (i < spans.length) {
    const first = spans[i] as Finding
    let end = first.end
    i++
    while (i < spans.length && (spans[i] as Finding).start <= end) {
      end = Math.max(end, (spans[i] as Finding).end)
      i++
    }
    const from = toUnit(Math.max(first.start, 0))
    if (from < copied) continue
    out += `${text.slice(copied, from)}${label(first)}`
    copied = toUnit(end)
  }
  return out + text.slice(copied)
}

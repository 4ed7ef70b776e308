import { jsonPointerAt } from '../json-pointer.js'
import type { Finding, FindingKind, TargetText } from '../types.js'

const SURROGATE = /[\uD800-\uDFFF]/

/** Whether UTF-16 offsets and code point offsets differ anywhere in `text` (one linear scan). */
export function hasAstral(text: string): boolean {
  return SURROGATE.test(text)
}

/**
 * Whether every character of `text` is ASCII: its UTF-8 length is then its length. Node counts
 * UTF-8 natively, several times faster than a regex or a loop over the characters.
 */
export function isAscii(text: string): boolean {
  return Buffer.byteLength(text, 'utf8') === text.length
}

/**
 * `isAscii(target.text)`, counted once per text: the answer is kept on the text (`ascii`), which
 * an evaluation's texts are made to hold (conversation.ts), so that the rules reading a text share it.
 */
export function isAsciiText(target: TargetText): boolean {
  let ascii = target.ascii
  if (ascii === undefined) {
    ascii = isAscii(target.text)
    target.ascii = ascii
  }
  return ascii
}

/** The length of `text` in code points. */
export function codePointLength(text: string): number {
  if (!hasAstral(text)) return text.length
  let n = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) i++
    }
    n++
  }
  return n
}

/**
 * Turns UTF-16 offsets of one text into code point offsets. Engines (V8, re2js, obscenity) report
 * UTF-16 offsets while findings count code points; walking from the last answer keeps a whole
 * text's conversions linear when asked in (nearly) ascending order, which is how matches arrive.
 */
export class CodePointIndex {
  private unit = 0
  private point = 0
  private readonly astral: boolean

  constructor(private readonly text: string) {
    this.astral = hasAstral(text)
  }

  /** The code point offset of UTF-16 offset `unit`; cheapest when asked near the last answer. */
  at(unit: number): number {
    if (!this.astral) return unit
    const t = this.text
    while (this.unit < unit) {
      const c = t.charCodeAt(this.unit)
      this.unit += c >= 0xd800 && c <= 0xdbff && (t.charCodeAt(this.unit + 1) & 0xfc00) === 0xdc00 ? 2 : 1
      this.point++
    }
    while (this.unit > unit) {
      const c = t.charCodeAt(this.unit - 1)
      this.unit -= (c & 0xfc00) === 0xdc00 && (t.charCodeAt(this.unit - 2) & 0xfc00) === 0xd800 ? 2 : 1
      this.point--
    }
    return this.point
  }

  /**
   * A finding of `kind` over UTF-16 span [start, end) of this index's text, the text of
   * `target`. In a tool call's text read from a conversation, the span is mapped back to the
   * call as sent (its arguments, or its name).
   */
  finding(kind: FindingKind, target: TargetText, start: number, end: number): Finding {
    if (target.call !== undefined) {
      const span = target.call.locate(start, end)
      return {
        kind,
        source: target.source,
        index: target.index,
        start: span.start,
        end: span.end,
        text: span.text,
        tool_call: target.tool_call ?? 0,
        path: span.path,
      }
    }
    const finding: Finding = {
      kind,
      source: target.source,
      index: target.index,
      start: this.at(start),
      end: this.at(end),
      text: this.text.slice(start, end),
    }
    if (target.tool_call !== undefined) {
      finding.tool_call = target.tool_call
      finding.path = jsonPointerAt(this.text, start)
    }
    return finding
  }
}

/** Sorts findings by start offset, longer first at the same start (the order matchers return). */
export function byStart(a: Finding, b: Finding): number {
  return a.start - b.start || b.end - a.end
}

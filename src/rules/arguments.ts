/**
 * A tool call as rules read it (docs/agents.md): its name, then its arguments as the client will
 * read them. Arguments are a JSON text the model wrote, and what the tool receives is that text
 * parsed: `{"card": "\u0034111 1111 1111 1111"}` is the card 4111 1111 1111 1111 once parsed, and
 * `"alice\u0040example.com"` an e-mail address. So arguments that are valid JSON are read as
 * their decoded values, one a line, each object member as `key: value` (a container's members
 * and items on the lines after its `key:`), strings decoded, numbers and literals as written:
 *
 *     {"order": 1042, "payment": {"card": "\u0034111 1111 1111 1111"}, "tags": ["a", "b"]}
 *
 * reads as
 *
 *     order: 1042
 *     payment:
 *     card: 4111 1111 1111 1111
 *     tags:
 *     a
 *     b
 *
 * and after the name's line. Arguments that are not valid JSON are read as sent. Every UTF-16 unit
 * of what is read remembers where it came from in the arguments as sent (an escape `\u0034` is six
 * units there, one here), so a finding counts its offsets in `function.arguments` as sent, its
 * text is what stands there, and its path is the JSON Pointer of the value (or member name) it
 * starts in. A finding in the name (`NAME_PATH`) counts in the name. Pure.
 */

import type { ToolCall } from '../schemas/messages.js'
import { CodePointIndex } from './detectors/code-points.js'
import { jsonPointerAt } from './json-pointer.js'
import type { CallSpan, ToolCallReading } from './types.js'

/** The `path` of a finding in a tool call's name: no JSON Pointer (those are empty or start with `/`). */
export const NAME_PATH = '#name'

/** The text of a tool call's arguments: a function's `arguments`, or a custom tool's `input`; null for neither. */
export function toolCallArguments(call: ToolCall): string | null {
  if (typeof call.function?.arguments === 'string') return call.function.arguments
  if (typeof call.custom?.input === 'string') return call.custom.input
  return null
}

/**
 * The name of what was called: the function's, or the custom tool's when the call is one (its
 * `input` read, or no function); null when it has none, or an empty one.
 */
export function toolCallName(call: ToolCall): string | null {
  const custom = typeof call.function?.arguments !== 'string' && typeof call.custom?.input === 'string'
  const name = custom ? call.custom?.name : (call.function?.name ?? call.custom?.name)
  return typeof name === 'string' && name !== '' ? name : null
}

/** JSON arguments decoded: the text read, and for each of its UTF-16 units where it came from. */
export interface DecodedArguments {
  text: string
  /** For each unit of `text`: the UTF-16 offset in the arguments where its source starts. */
  from: Int32Array
  /** For each unit of `text`: the UTF-16 offset in the arguments where its source ends. */
  to: Int32Array
  /** Where each line's value (or member) starts in `text`, ascending, and its JSON Pointer. */
  lineAt: Int32Array
  linePath: readonly string[]
}

const escapeToken = (token: string) => token.replaceAll('~', '~0').replaceAll('/', '~1')

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
}

/** Whether a character may be part of a number or of `true`, `false`, `null` (the JSON is valid). */
function isScalarCode(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 122) || c === 45 || c === 43 || c === 46 || c === 69
}

interface Frame {
  array: boolean
  path: string
  index: number
}

/**
 * Arguments that are valid JSON (as `JSON.parse` says), decoded as the module's comment shows;
 * null for any other text. Iterative: no nesting exhausts the stack.
 */
export function decodeArguments(raw: string): DecodedArguments | null {
  try {
    JSON.parse(raw)
  } catch {
    return null
  }
  const parts: string[] = []
  // Reading never grows the text: `"k":v` reads `k: v`, an escape reads one unit, `,` reads "\n".
  let from = new Int32Array(raw.length + 8)
  let to = new Int32Array(raw.length + 8)
  let size = 0
  const lineAt: number[] = []
  const linePath: string[] = []
  /** Where the last unit read from the arguments ends there: what a unit Warden adds maps to. */
  let lastEnd = 0
  const reserve = (extra: number) => {
    if (size + extra <= from.length) return
    const grownFrom = new Int32Array((size + extra) * 2)
    const grownTo = new Int32Array((size + extra) * 2)
    grownFrom.set(from)
    grownTo.set(to)
    from = grownFrom
    to = grownTo
  }
  /** Units that stand for no text of the arguments (`: `, a line break): empty, at the last end. */
  const added = (text: string) => {
    reserve(text.length)
    for (let k = 0; k < text.length; k++) {
      from[size] = lastEnd
      to[size] = lastEnd
      size++
    }
    parts.push(text)
  }
  const line = (path: string) => {
    if (size > 0) added('\n')
    lineAt.push(size)
    linePath.push(path)
  }
  /** Units [start, end) of the arguments read as they stand. */
  const verbatim = (start: number, end: number) => {
    reserve(end - start)
    for (let k = start; k < end; k++) {
      from[size] = k
      to[size] = k + 1
      size++
    }
    parts.push(raw.slice(start, end))
    lastEnd = end
  }
  /**
   * Reads the string whose opening quote is at `i`; returns the offset after it, and its value
   * when `keep` (a member's name, for its pointer).
   */
  const string = (i: number, keep: boolean): { value: string; next: number } => {
    let j = i + 1
    let run = j
    let value = ''
    for (;;) {
      const c = raw.charCodeAt(j)
      if (c === 0x22 || c === 0x5c) {
        if (j > run) {
          verbatim(run, j)
          if (keep) value += raw.slice(run, j)
        }
        if (c === 0x22) return { value, next: j + 1 }
        const e = raw[j + 1] as string
        const length = e === 'u' ? 6 : 2
        const unit =
          e === 'u' ? String.fromCharCode(Number.parseInt(raw.slice(j + 2, j + 6), 16)) : SIMPLE_ESCAPES[e]
        reserve(1)
        from[size] = j
        to[size] = j + length
        size++
        parts.push(unit as string)
        if (keep) value += unit
        lastEnd = j + length
        j += length
        run = j
      } else j++
    }
  }
  const space = (i: number) => {
    let j = i
    for (;;) {
      const c = raw.charCodeAt(j)
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return j
      j++
    }
  }

  const stack: Frame[] = []
  let i = space(0)
  // The value about to be read: its pointer, and whether a member's name is on its line already.
  let path = ''
  let member = false
  for (;;) {
    const c = raw.charCodeAt(i)
    if (c === 0x7b || c === 0x5b) {
      if (member) added(':')
      stack.push({ array: c === 0x5b, path, index: 0 })
      i = space(i + 1)
      const close = raw.charCodeAt(i)
      if (close === 0x7d || close === 0x5d) {
        stack.pop()
        i = space(i + 1)
      } else if (c === 0x5b) {
        path = `${path}/0`
        member = false
        continue
      } else {
        i = memberName(i, path)
        continue
      }
    } else {
      if (member) added(': ')
      else line(path)
      if (c === 0x22) i = string(i, false).next
      else {
        let j = i + 1
        while (j < raw.length && isScalarCode(raw.charCodeAt(j))) j++
        verbatim(i, j)
        i = j
      }
      i = space(i)
    }
    // After a value: the next item or member of its container, or the container's end.
    let next = false
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as Frame
      if (raw.charCodeAt(i) === 0x2c) {
        i = space(i + 1)
        if (top.array) {
          top.index++
          path = `${top.path}/${top.index}`
          member = false
        } else i = memberName(i, top.path)
        next = true
        break
      }
      stack.pop()
      i = space(i + 1)
    }
    if (!next) break
  }
  return {
    text: parts.join(''),
    from: from.subarray(0, size),
    to: to.subarray(0, size),
    lineAt: Int32Array.from(lineAt),
    linePath,
  }

  /** Reads a member's name at `i` (its quote) and the colon after it; the value's line is begun. */
  function memberName(at: number, parent: string): number {
    // The line is the member's: its pointer is known once its name is read.
    line(parent)
    const lineIndex = linePath.length - 1
    const name = string(at, true)
    path = `${parent}/${escapeToken(name.value)}`
    linePath[lineIndex] = path
    member = true
    // The colon, and the space around it.
    return space(space(name.next) + 1)
  }
}

/** The last line starting at or before `unit`. */
function lineOf(decoded: DecodedArguments, unit: number): string {
  let lo = 0
  let hi = decoded.lineAt.length - 1
  let found = 0
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if ((decoded.lineAt[mid] as number) <= unit) {
      found = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return decoded.linePath[found] ?? ''
}

/**
 * How a tool call's text maps back to the call: units [0, argumentsAt) are the name and the line
 * break after it, the rest the arguments, decoded (`decoded`) or as sent.
 */
class CallReading implements ToolCallReading {
  private nameIndex: CodePointIndex | undefined
  private argumentsIndex: CodePointIndex | undefined
  readonly arguments: string | null

  constructor(
    readonly name: string | null,
    raw: string | null,
    private readonly argumentsAt: number,
    private readonly decoded: DecodedArguments | null,
  ) {
    this.arguments = raw
  }

  locate(start: number, end: number): CallSpan {
    // A span from the line break after the name into the arguments starts in the arguments.
    const inName = start < this.argumentsAt && !(start >= this.argumentsAt - 1 && end > this.argumentsAt)
    if (inName || this.arguments === null) {
      const name = this.name ?? ''
      const s = Math.min(start, name.length)
      const e = Math.max(s, Math.min(end, name.length))
      this.nameIndex ??= new CodePointIndex(name)
      return {
        start: this.nameIndex.at(s),
        end: this.nameIndex.at(e),
        text: name.slice(s, e),
        path: NAME_PATH,
      }
    }
    const raw = this.arguments
    const decoded = this.decoded
    let s: number
    let e: number
    let path: string
    const u = Math.max(0, start - this.argumentsAt)
    const v = end - this.argumentsAt
    if (decoded === null) {
      s = u
      e = v
      path = jsonPointerAt(raw, s)
    } else {
      s = u < decoded.from.length ? (decoded.from[u] as number) : raw.length
      e = v > u ? (decoded.to[v - 1] as number) : s
      path = lineOf(decoded, u)
    }
    this.argumentsIndex ??= new CodePointIndex(raw)
    return { start: this.argumentsIndex.at(s), end: this.argumentsIndex.at(e), text: raw.slice(s, e), path }
  }
}

/**
 * The text a tool call reads as (the module's comment), and how it maps back; null for a call
 * with neither a name nor arguments.
 */
export function readToolCall(call: ToolCall): { text: string; reading: ToolCallReading } | null {
  const name = toolCallName(call)
  const raw = toolCallArguments(call)
  if (name === null && raw === null) return null
  const head = name === null ? '' : raw === null ? name : `${name}\n`
  const decoded = raw === null ? null : decodeArguments(raw)
  const body = raw === null ? '' : decoded === null ? raw : decoded.text
  return { text: head + body, reading: new CallReading(name, raw, head.length, decoded) }
}

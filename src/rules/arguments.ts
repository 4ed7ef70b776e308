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

/** Nesting past this many levels is located at its ancestor this deep (as json-pointer.ts gives up at it). */
export const MAX_POINTER_DEPTH = 256

/** JSON arguments decoded: the text read, and for each of its UTF-16 units where it came from. */
export interface DecodedArguments {
  text: string
  /** The UTF-16 offset in the arguments where the source of unit `unit` of `text` starts. */
  from(unit: number): number
  /** The UTF-16 offset in the arguments where the source of unit `unit` of `text` ends. */
  to(unit: number): number
  /** Where each line (a value, or a member's name and value) starts in `text`, ascending. */
  lineAt: readonly number[]
  /** The JSON Pointer of line `k`'s value (its member, for a member's line). */
  linePointer(k: number): string
}

const escapeToken = (token: string) =>
  token.includes('~') || token.includes('/') ? token.replaceAll('~', '~0').replaceAll('/', '~1') : token

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

/**
 * The values of the arguments as a tree of their JSON Pointers' tokens: node 0 is the whole
 * arguments, every other node a member or an item of its parent. A pointer is built only when a
 * finding asks for it, at most MAX_POINTER_DEPTH tokens long, and kept: building every value's
 * pointer as it is read would cost the depth of each value (quadratic in a deep nesting).
 */
class Pointers {
  private readonly parent: number[] = [-1]
  private readonly token: string[] = ['']
  /** The node itself, or its ancestor MAX_POINTER_DEPTH deep. */
  private readonly anchor: number[] = [0]
  private readonly depth: number[] = [0]
  private readonly built = new Map<number, string>([[0, '']])

  /** A new node under `parent`, named `token` (unescaped). */
  add(parent: number, token: string): number {
    const node = this.parent.length
    const depth = (this.depth[parent] as number) + 1
    this.parent.push(parent)
    this.token.push(token)
    this.depth.push(depth)
    this.anchor.push(depth <= MAX_POINTER_DEPTH ? node : (this.anchor[parent] as number))
    return node
  }

  pointer(node: number): string {
    const anchor = this.anchor[node] as number
    const known = this.built.get(anchor)
    if (known !== undefined) return known
    // The chain up to the nearest ancestor whose pointer is built (the root's is).
    const chain: number[] = []
    let n = anchor
    while (!this.built.has(n)) {
      chain.push(n)
      n = this.parent[n] as number
    }
    let pointer = this.built.get(n) as string
    for (let k = chain.length - 1; k >= 0; k--) {
      const m = chain[k] as number
      pointer = `${pointer}/${escapeToken(this.token[m] as string)}`
      this.built.set(m, pointer)
    }
    return pointer
  }
}

interface Frame {
  array: boolean
  node: number
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
  let text = ''
  let size = 0
  // Where each unit came from, by runs: run k starts at unit runAt[k] of the text. A run read as
  // it stands (runEnd -1) maps unit runAt[k] + d to [runStart[k] + d, + 1); any other run (an
  // escape, or units Warden adds) maps each of its units to [runStart[k], runEnd[k]).
  const runAt: number[] = []
  const runStart: number[] = []
  const runEnd: number[] = []
  const lineAt: number[] = []
  const lineNode: number[] = []
  const pointers = new Pointers()
  /** Where the last unit read from the arguments ends there: what a unit Warden adds maps to. */
  let lastEnd = 0
  /** Units that stand for no text of the arguments (`: `, a line break): empty, at the last end. */
  const added = (units: string) => {
    runAt.push(size)
    runStart.push(lastEnd)
    runEnd.push(lastEnd)
    size += units.length
    text += units
  }
  const line = (node: number) => {
    if (size > 0) added('\n')
    lineAt.push(size)
    lineNode.push(node)
  }
  /** Units [start, end) of the arguments read as they stand. */
  const verbatim = (start: number, end: number) => {
    runAt.push(size)
    runStart.push(start)
    runEnd.push(-1)
    size += end - start
    text += raw.slice(start, end)
    lastEnd = end
  }
  /** The next backslash at or after the last asked for (-1: none; -2: not looked for yet). */
  let backslash = -2
  /**
   * Reads the string whose opening quote is at `i`; returns the offset after it, and its value
   * when `keep` (a member's name, for its pointer). Runs between escapes are found natively.
   */
  const string = (i: number, keep: boolean): { value: string; next: number } => {
    let j = i + 1
    let value = ''
    for (;;) {
      if (backslash !== -1 && backslash < j) backslash = raw.indexOf('\\', j)
      const quote = raw.indexOf('"', j)
      const end = backslash === -1 || quote < backslash ? quote : backslash
      if (end > j) {
        verbatim(j, end)
        if (keep) value += raw.slice(j, end)
      }
      if (end === quote) return { value, next: quote + 1 }
      const e = raw[end + 1] as string
      const length = e === 'u' ? 6 : 2
      const unit =
        e === 'u' ? String.fromCharCode(Number.parseInt(raw.slice(end + 2, end + 6), 16)) : SIMPLE_ESCAPES[e]
      runAt.push(size)
      runStart.push(end)
      runEnd.push(end + length)
      size++
      text += unit as string
      if (keep) value += unit
      lastEnd = end + length
      j = end + length
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
  /** Reads a member's name at `at` (its quote) and the colon after it, on a new line: its node. */
  const memberName = (at: number, parent: number): { node: number; next: number } => {
    line(0)
    const name = string(at, true)
    const node = pointers.add(parent, name.value)
    lineNode[lineNode.length - 1] = node
    // The colon, and the space around it.
    return { node, next: space(space(name.next) + 1) }
  }

  const stack: Frame[] = []
  let i = space(0)
  // The value about to be read: its node, and whether a member's name is on its line already.
  let node = 0
  let member = false
  for (;;) {
    const c = raw.charCodeAt(i)
    if (c === 0x7b || c === 0x5b) {
      if (member) added(':')
      const frame: Frame = { array: c === 0x5b, node, index: 0 }
      stack.push(frame)
      i = space(i + 1)
      const close = raw.charCodeAt(i)
      if (close === 0x7d || close === 0x5d) {
        stack.pop()
        i = space(i + 1)
      } else {
        if (frame.array) {
          node = pointers.add(frame.node, '0')
          member = false
        } else {
          const name = memberName(i, frame.node)
          node = name.node
          i = name.next
          member = true
        }
        continue
      }
    } else {
      if (member) added(': ')
      else line(node)
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
          node = pointers.add(top.node, String(top.index))
          member = false
        } else {
          const name = memberName(i, top.node)
          node = name.node
          i = name.next
          member = true
        }
        next = true
        break
      }
      stack.pop()
      i = space(i + 1)
    }
    if (!next) break
  }
  const runs = { at: runAt, start: runStart, end: runEnd }
  return {
    text,
    from: (unit) => {
      const k = lastAtOrBefore(runs.at, unit)
      const end = runs.end[k] as number
      return (runs.start[k] as number) + (end < 0 ? unit - (runs.at[k] as number) : 0)
    },
    to: (unit) => {
      const k = lastAtOrBefore(runs.at, unit)
      const end = runs.end[k] as number
      return end < 0 ? (runs.start[k] as number) + unit - (runs.at[k] as number) + 1 : end
    },
    lineAt,
    linePointer: (k) => pointers.pointer(lineNode[k] ?? 0),
  }
}

/** The last index k of ascending `at` with at[k] <= `value` (0 when none is). */
function lastAtOrBefore(at: readonly number[], value: number): number {
  let lo = 0
  let hi = at.length - 1
  let found = 0
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if ((at[mid] as number) <= value) {
      found = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return found
}

/** The pointer of the last line starting at or before `unit`. */
function pointerAt(decoded: DecodedArguments, unit: number): string {
  if (decoded.lineAt.length === 0 || (decoded.lineAt[0] as number) > unit) return ''
  return decoded.linePointer(lastAtOrBefore(decoded.lineAt, unit))
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
      s = u < decoded.text.length ? decoded.from(u) : raw.length
      e = v > u ? decoded.to(v - 1) : s
      path = pointerAt(decoded, u)
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

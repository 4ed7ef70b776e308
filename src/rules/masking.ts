/**
 * Masking (docs/masking.md, CONTRACT section 13): the findings of mask rules replaced by numbered
 * placeholders (`[EMAIL_1]`), so that a conversation can go on without the values. Pure: no I/O.
 *
 * - `planMasking` decides, from the conversation as read and the findings of the enforced mask
 *   rules, which span of which text becomes which placeholder: numbered per kind in order of first
 *   appearance over the whole conversation (messages in order, each message's content before its
 *   tool calls' arguments, then the context documents), the same text always the same
 *   placeholder, and a number already present in the conversation as literal text skipped.
 *   Overlapping findings are merged into one span, which takes the kind of the finding that starts
 *   first (the longest, when two start together).
 * - `maskMessages` applies a plan to the messages exactly as sent (string content, text and
 *   refusal parts, tool-call arguments inside their JSON strings), leaving everything else as it
 *   was.
 * - `Restorer` puts issued placeholders back into a reply, whole or as it streams.
 */
import type { ChatMessage } from '../schemas/messages.js'
import { NAME_PATH } from './arguments.js'
import { type ConversationInput, messageText, toolCallText } from './conversation.js'
import type { Finding } from './types.js'

/** A placeholder issued for one value. */
export interface Placeholder {
  placeholder: string
  /** The finding's kind: a pii kind (`email`), `keyword` or `regex`. */
  kind: string
  /** The value it stands for, as written in the conversation. */
  text: string
}

/** One span of one text to replace: code point offsets in the text as sent. */
export interface MaskSpan {
  start: number
  end: number
  /** Index into `MaskPlan.placeholders`. */
  placeholder: number
}

/**
 * Where a span is: a message's content (`tool_call` absent), a tool call's arguments, or a context
 * document.
 */
export interface MaskedText {
  source: 'messages' | 'context'
  index: number
  tool_call?: number
  spans: MaskSpan[]
}

/** What masking a conversation replaces, and with what. Structured-clonable (it crosses from a pool worker). */
export interface MaskPlan {
  placeholders: Placeholder[]
  /** Whether the guarded proxies put each placeholder's value back into the reply (`restore`), by placeholder index. */
  restore: boolean[]
  texts: MaskedText[]
}

/** A mask rule's finding, with what its rule says of restoring it. */
export interface MaskFinding {
  finding: Finding
  restore: boolean
}

/** The placeholder's KIND: the finding's kind upper-cased (`CREDIT_CARD`). */
export const placeholderKind = (kind: string): string => kind.toUpperCase()

const LITERAL_PLACEHOLDER = /\[([A-Z][A-Z0-9_]*)_(\d{1,9})\]/g

/** Numbers each kind already has as literal text (`[EMAIL_1]` typed by a user), which placeholders skip. */
function literalNumbers(texts: Iterable<string>): Map<string, Set<number>> {
  const taken = new Map<string, Set<number>>()
  for (const text of texts) {
    if (!text.includes('[')) continue
    LITERAL_PLACEHOLDER.lastIndex = 0
    for (let m = LITERAL_PLACEHOLDER.exec(text); m !== null; m = LITERAL_PLACEHOLDER.exec(text)) {
      const kind = m[1] as string
      let set = taken.get(kind)
      if (!set) {
        set = new Set()
        taken.set(kind, set)
      }
      set.add(Number(m[2]))
    }
  }
  return taken
}

/** A text's key: where it is, in the order masking numbers placeholders. */
const textKey = (source: 'messages' | 'context', index: number, toolCall: number | undefined) =>
  `${source === 'messages' ? 0 : 1}:${String(index).padStart(10, '0')}:${toolCall === undefined ? '' : String(toolCall + 1).padStart(10, '0')}`

/** The code point slice [start, end) of `text`. */
export function codePointSlice(text: string, start: number, end: number): string {
  const from = unitOffset(text, start)
  return text.slice(from, unitOffset(text, end, from, start))
}

/** The UTF-16 offset of code point offset `point` in `text`, walking from (`fromUnit`, `fromPoint`). */
export function unitOffset(text: string, point: number, fromUnit = 0, fromPoint = 0): number {
  let unit = fromUnit
  let at = fromPoint
  while (at < point && unit < text.length) {
    const c = text.charCodeAt(unit)
    unit += c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(unit + 1) & 0xfc00) === 0xdc00 ? 2 : 1
    at++
  }
  return unit
}

/**
 * Which span of which text becomes which placeholder (see the module's comment). `findings`
 * are those of the enforced mask rules; `read` the conversation as the evaluation read it.
 */
export function planMasking(input: ConversationInput, findings: readonly MaskFinding[]): MaskPlan {
  // Texts as sent: a tool call's arguments raw (findings count in them), not as rules read them.
  const textOf = (f: Finding): string | null => {
    if (f.source === 'context') return input.context?.[f.index] ?? null
    const message = input.messages[f.index]
    if (!message) return null
    if (f.tool_call === undefined) return messageText(message.content)
    // A function's name stays as it is: a finding there is not masked (its offsets count in the name).
    if (f.path === NAME_PATH) return null
    const call = message.tool_calls?.[f.tool_call]
    return call ? toolCallText(call) : null
  }
  // Findings grouped by text, the texts in conversation order.
  const byText = new Map<
    string,
    { source: 'messages' | 'context'; index: number; tool_call?: number; text: string; found: MaskFinding[] }
  >()
  for (const item of findings) {
    const f = item.finding
    const text = textOf(f)
    if (text === null) continue
    const key = textKey(f.source, f.index, f.tool_call)
    let group = byText.get(key)
    if (!group) {
      group = { source: f.source, index: f.index, text, found: [] }
      if (f.tool_call !== undefined) group.tool_call = f.tool_call
      byText.set(key, group)
    }
    group.found.push(item)
  }
  const allTexts: string[] = [...(input.context ?? [])]
  for (const m of input.messages) {
    allTexts.push(messageText(m.content))
    for (const call of m.tool_calls ?? []) allTexts.push(toolCallText(call) ?? '')
  }
  const taken = literalNumbers(allTexts)
  const next = new Map<string, number>()
  const issued = new Map<string, number>()
  const plan: MaskPlan = { placeholders: [], restore: [], texts: [] }
  const issue = (kind: string, value: string, restore: boolean): number => {
    const key = `${kind}\0${value}`
    const known = issued.get(key)
    if (known !== undefined) {
      // One finding that may not come back keeps the value masked wherever it stands.
      if (!restore) plan.restore[known] = false
      return known
    }
    const upper = placeholderKind(kind)
    let n = next.get(upper) ?? 1
    const skip = taken.get(upper)
    while (skip?.has(n)) n++
    next.set(upper, n + 1)
    plan.placeholders.push({ placeholder: `[${upper}_${n}]`, kind, text: value })
    plan.restore.push(restore)
    issued.set(key, plan.placeholders.length - 1)
    return plan.placeholders.length - 1
  }
  for (const key of [...byText.keys()].sort()) {
    const group = byText.get(key) as NonNullable<ReturnType<typeof byText.get>>
    const sorted = [...group.found].sort(
      (a, b) => a.finding.start - b.finding.start || b.finding.end - a.finding.end,
    )
    const spans: MaskSpan[] = []
    let i = 0
    while (i < sorted.length) {
      const first = sorted[i] as MaskFinding
      let end = first.finding.end
      let restore = first.restore
      i++
      while (i < sorted.length && (sorted[i] as MaskFinding).finding.start < end) {
        const more = sorted[i] as MaskFinding
        end = Math.max(end, more.finding.end)
        restore &&= more.restore
        i++
      }
      const start = first.finding.start
      if (end <= start) continue
      const value = codePointSlice(group.text, start, end)
      spans.push({ start, end, placeholder: issue(first.finding.kind, value, restore) })
    }
    const masked: MaskedText = { source: group.source, index: group.index, spans }
    if (group.tool_call !== undefined) masked.tool_call = group.tool_call
    plan.texts.push(masked)
  }
  return plan
}

/** `text` with `spans` (code point offsets, ascending, apart) replaced by what `write` says of each. */
export function replaceSpans(
  text: string,
  spans: readonly MaskSpan[],
  write: (span: MaskSpan) => string,
): string {
  let out = ''
  let unit = 0
  let point = 0
  for (const span of spans) {
    const from = unitOffset(text, span.start, unit, point)
    const to = unitOffset(text, span.end, from, span.start)
    out += text.slice(unit, from) + write(span)
    unit = to
    point = span.end
  }
  return out + text.slice(unit)
}

/** The placeholders of a plan as `replaceSpans` writes them. */
export const numbered =
  (plan: MaskPlan) =>
  (span: MaskSpan): string =>
    (plan.placeholders[span.placeholder] as Placeholder).placeholder

/** `[KIND]` for each span: an output mask rule's replacement, nothing to restore. */
export const unnumbered =
  (plan: MaskPlan) =>
  (span: MaskSpan): string =>
    `[${placeholderKind((plan.placeholders[span.placeholder] as Placeholder).kind)}]`

/**
 * Messages exactly as sent, each masked span replaced by `write(span)`: string content; text and
 * refusal parts (the read text is the parts joined with "\n", so a span never crosses two parts
 * unless a finding did, and then each part keeps its share); an assistant turn without content,
 * its refusal; tool-call arguments, inside their JSON strings (placeholders need no escaping, so
 * the arguments stay valid JSON).
 */
export function maskMessages<M extends ChatMessage>(
  messages: readonly M[],
  plan: MaskPlan,
  write: (span: MaskSpan) => string,
): M[] {
  const byMessage = new Map<number, MaskedText[]>()
  for (const t of plan.texts) {
    if (t.source !== 'messages') continue
    const list = byMessage.get(t.index)
    if (list) list.push(t)
    else byMessage.set(t.index, [t])
  }
  return messages.map((message, index) => {
    const texts = byMessage.get(index)
    if (!texts) return message
    const out: M = { ...message }
    for (const t of texts) {
      if (t.tool_call === undefined) maskContent(out, t.spans, write)
      else if (Array.isArray(out.tool_calls)) {
        const calls = [...out.tool_calls]
        const call = calls[t.tool_call]
        if (!call) continue
        const args = toolCallText(call)
        if (args === null) continue
        const masked = replaceSpans(args, t.spans, write)
        calls[t.tool_call] =
          call.function?.arguments !== undefined
            ? { ...call, function: { ...call.function, arguments: masked } }
            : { ...call, custom: { ...call.custom, input: masked } }
        out.tool_calls = calls
      }
    }
    return out
  })
}

function maskContent(
  message: ChatMessage,
  spans: readonly MaskSpan[],
  write: (span: MaskSpan) => string,
): void {
  const content = message.content
  if (typeof content === 'string') {
    message.content = replaceSpans(content, spans, write)
    return
  }
  if (Array.isArray(content)) {
    // The read text is the text and refusal parts joined with "\n": each part's share of the spans.
    let at = 0
    message.content = content.map((part) => {
      const field =
        part.type === 'text' && typeof part.text === 'string'
          ? 'text'
          : part.type === 'refusal' && typeof part.refusal === 'string'
            ? 'refusal'
            : null
      if (field === null) return part
      const text = part[field] as string
      const length = [...text].length
      const from = at
      const to = at + length
      at = to + 1
      const mine = spans
        .filter((s) => s.start < to && s.end > from)
        .map((s) => ({ ...s, start: Math.max(s.start, from) - from, end: Math.min(s.end, to) - from }))
      return mine.length === 0 ? part : { ...part, [field]: replaceSpans(text, mine, write) }
    })
    return
  }
  if (typeof message.refusal === 'string') message.refusal = replaceSpans(message.refusal, spans, write)
}

/** Context documents with their masked spans replaced. */
export function maskContext(
  context: readonly string[],
  plan: MaskPlan,
  write: (span: MaskSpan) => string,
): string[] {
  const byIndex = new Map<number, MaskSpan[]>()
  for (const t of plan.texts) if (t.source === 'context') byIndex.set(t.index, t.spans)
  return context.map((text, i) => {
    const spans = byIndex.get(i)
    return spans ? replaceSpans(text, spans, write) : text
  })
}

/** How many values of each kind a plan masked (what `warden` says; never the values). */
export function maskedCounts(plan: MaskPlan): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const p of plan.placeholders) counts[p.kind] = (counts[p.kind] ?? 0) + 1
  return counts
}

/**
 * What the log writes for a finding of a mask rule instead of its text: the placeholder the plan
 * issued for that value, or `[KIND]` (a value merged into a longer span, or one a monitor policy
 * found and nothing masked). The log never keeps a masked value.
 */
export function maskedLabel(
  plan: MaskPlan | null,
): (finding: Pick<Finding, 'text'> & { kind: string }) => string {
  const issued = new Map<string, string>()
  for (const p of plan?.placeholders ?? []) issued.set(`${p.kind}\0${p.text}`, p.placeholder)
  return (f) =>
    (f.text !== null ? issued.get(`${f.kind}\0${f.text}`) : undefined) ?? `[${placeholderKind(f.kind)}]`
}

/** The values a reply gets back, by placeholder: those of `plan` whose rules restore. */
export function restorable(plan: MaskPlan | null): ReadonlyMap<string, string> {
  const values = new Map<string, string>()
  if (plan === null) return values
  plan.placeholders.forEach((p, i) => {
    if (plan.restore[i]) values.set(p.placeholder, p.text)
  })
  return values
}

const PLACEHOLDER = /\[[A-Z][A-Z0-9_]*_\d{1,9}\]/g

/**
 * `text` with every placeholder of `values` put back; `json`: the text is inside a JSON string
 * (tool-call arguments), and each value goes in escaped.
 */
export function restoreText(text: string, values: ReadonlyMap<string, string>, json = false): string {
  if (values.size === 0 || !text.includes('[')) return text
  return text.replace(PLACEHOLDER, (found) => {
    const value = values.get(found)
    if (value === undefined) return found
    return json ? JSON.stringify(value).slice(1, -1) : value
  })
}

/**
 * Puts placeholders back into a reply as it streams: text that ends in what may be the start of
 * an issued placeholder (`[`, `[EMA`, `[EMAIL_1`) is held until the next piece says what it is.
 */
export class Restorer {
  private held = ''
  private readonly longest: number

  constructor(
    private readonly values: ReadonlyMap<string, string>,
    private readonly json = false,
  ) {
    let longest = 0
    for (const p of values.keys()) longest = Math.max(longest, p.length)
    this.longest = longest
  }

  /** Whether anything is ever restored: without values, text passes as it is. */
  get active(): boolean {
    return this.values.size > 0
  }

  /** The next piece: what can be sent now, placeholders put back. */
  push(piece: string): string {
    if (!this.active) return piece
    const text = this.held + piece
    const open = text.lastIndexOf('[')
    let cut = text.length
    if (open >= 0 && text.length - open < this.longest) {
      const tail = text.slice(open)
      for (const p of this.values.keys())
        if (p.startsWith(tail) && p !== tail) {
          cut = open
          break
        }
    }
    this.held = text.slice(cut)
    return restoreText(text.slice(0, cut), this.values, this.json)
  }

  /** The reply ended: whatever was held, as it is. */
  end(): string {
    const rest = this.held
    this.held = ''
    return rest
  }
}

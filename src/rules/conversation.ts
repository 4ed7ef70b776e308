import type { ChatMessage, ConversationMessage, NotRead, TextPart, ToolCall } from '../schemas/messages.js'
import type { TARGETS } from '../schemas/policies.js'
import { readToolCall, toolCallArguments } from './arguments.js'
import type { TargetText } from './types.js'

export type Target = (typeof TARGETS)[number]

export type { ConversationMessage, MessageRole, NotRead, TextPart } from '../schemas/messages.js'

/**
 * Messages in OpenAI's shape (src/schemas/messages.ts) as an evaluation reads them: content as
 * text (a string, or its text parts; refusal parts read as text; null or absent as ""; an
 * assistant turn without content as its refusal), `function` as `tool`, tool calls kept with their
 * arguments; and what was passed over, in order: non-text parts, `audio`, `function_call`.
 */
export function readableMessages(messages: readonly ChatMessage[]): {
  messages: ConversationMessage[]
  notRead: NotRead[]
} {
  const notRead: NotRead[] = []
  const readable = messages.map((m, index): ConversationMessage => {
    let content: string | TextPart[]
    if (typeof m.content === 'string') content = m.content
    else if (Array.isArray(m.content)) {
      const parts: TextPart[] = []
      m.content.forEach((part, p) => {
        if (part.type === 'text' && typeof part.text === 'string')
          parts.push({ type: 'text', text: part.text })
        else if (part.type === 'refusal' && typeof part.refusal === 'string')
          parts.push({ type: 'text', text: part.refusal })
        else notRead.push({ index, part: p, type: part.type })
      })
      content = parts
    } else content = typeof m.refusal === 'string' ? m.refusal : ''
    if (m.audio != null) notRead.push({ index, part: null, type: 'audio' })
    if (m.function_call != null) notRead.push({ index, part: null, type: 'function_call' })
    const message: ConversationMessage = { role: m.role === 'function' ? 'tool' : m.role, content }
    if (m.tool_calls !== undefined && m.tool_calls.length > 0) message.tool_calls = m.tool_calls
    if (m.tool_call_id !== undefined) message.tool_call_id = m.tool_call_id
    if (m.name !== undefined) message.name = m.name
    return message
  })
  return { messages: readable, notRead }
}

/** A tool call's arguments as sent: a function's `arguments`, or a custom tool's `input`. */
export function toolCallText(call: ToolCall): string | null {
  return toolCallArguments(call)
}

/** What an evaluation reads (section 8): the messages and the documents the output is grounded in. */
export interface ConversationInput {
  messages: readonly ConversationMessage[]
  context: readonly string[] | null
}

/** A set of targets as bits, so the texts of each distinct set are gathered once per conversation. */
export type TargetMask = number

const TARGET_BITS: Readonly<Record<Target, number>> = {
  input: 1,
  output: 2,
  user: 4,
  assistant: 8,
  system: 16,
  context: 32,
}

export function targetMask(targets: readonly Target[]): TargetMask {
  let mask = 0
  for (const t of targets) mask |= TARGET_BITS[t]
  return mask
}

/** A conversation read once: every text as rules see it, and the texts each target names. */
export interface Conversation {
  /** One per message, in order; `developer` reads as `system`, a tool result is a `document`. */
  readonly messages: readonly TargetText[]
  /**
   * Every tool call, in conversation order (kind `arguments`): its name and its arguments as the
   * client reads them (decoded JSON values, arguments.ts).
   */
  readonly toolCalls: readonly TargetText[]
  /** One per context document. */
  readonly context: readonly TargetText[]
  /** The last `user` message, or null. */
  readonly input: TargetText | null
  /** The last message when it is the assistant's, or null. */
  readonly output: TargetText | null
  /**
   * The texts `targets` name, each once, in conversation order (messages, each followed by its
   * tool calls, then documents): `context` names the tool results (messages with role `tool`)
   * with the documents, `assistant` every assistant turn's tool calls, `output` those of the
   * output's turn.
   */
  textsFor(targets: readonly Target[] | TargetMask): readonly TargetText[]
}

/** A message's content as one text: parts joined with "\n". */
export function messageText(content: string | readonly TextPart[] | null | undefined): string {
  if (typeof content === 'string') return content
  if (content == null) return ''
  if (content.length === 1) return content[0]?.text ?? ''
  return content.map((part) => part.text ?? '').join('\n')
}

/** Reads a conversation for evaluation. */
export function readConversation(input: ConversationInput): Conversation {
  const messages: TargetText[] = input.messages.map((m, index) => ({
    source: 'messages',
    index,
    role: m.role === 'developer' ? 'system' : m.role,
    kind: m.role === 'tool' ? 'document' : 'message',
    text: messageText(m.content),
    ascii: undefined,
  }))
  // The arguments of each message's tool calls, by message index.
  const callsOf: (TargetText[] | undefined)[] = []
  const toolCalls: TargetText[] = []
  input.messages.forEach((m, index) => {
    if (m.role !== 'assistant' || !m.tool_calls) return
    const calls: TargetText[] = []
    m.tool_calls.forEach((call, position) => {
      const read = readToolCall(call)
      if (read === null) return
      calls.push({
        source: 'messages',
        index,
        role: 'assistant',
        kind: 'arguments',
        tool_call: position,
        text: read.text,
        ascii: undefined,
        call: read.reading,
      })
    })
    if (calls.length > 0) {
      callsOf[index] = calls
      toolCalls.push(...calls)
    }
  })
  const context: TargetText[] = (input.context ?? []).map((text, index) => ({
    source: 'context',
    index,
    role: 'context',
    kind: 'document',
    text,
    ascii: undefined,
  }))
  let input_: TargetText | null = null
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === 'user') {
      input_ = messages[i] ?? null
      break
    }
  }
  const last = messages[messages.length - 1]
  const output = last?.role === 'assistant' ? last : null
  // 64 possible target sets; policies of one application usually share one or two of them.
  const gathered: (readonly TargetText[] | undefined)[] = []

  function gather(mask: TargetMask): readonly TargetText[] {
    const texts: TargetText[] = []
    const roles =
      (mask & TARGET_BITS.user ? 1 : 0) |
      (mask & TARGET_BITS.assistant ? 2 : 0) |
      (mask & TARGET_BITS.system ? 4 : 0)
    const wantsInput = (mask & TARGET_BITS.input) !== 0
    const wantsOutput = (mask & TARGET_BITS.output) !== 0
    const wantsContext = (mask & TARGET_BITS.context) !== 0
    for (const m of messages) {
      const byRole =
        (m.role === 'user' && roles & 1) ||
        (m.role === 'assistant' && roles & 2) ||
        (m.role === 'system' && roles & 4) ||
        (m.role === 'tool' && wantsContext)
      const isOutput = wantsOutput && m === output
      if (byRole || (wantsInput && m === input_) || isOutput) texts.push(m)
      const calls = callsOf[m.index]
      if (calls && ((m.role === 'assistant' && roles & 2) || isOutput)) texts.push(...calls)
    }
    if (wantsContext) texts.push(...context)
    return texts
  }

  return {
    messages,
    toolCalls,
    context,
    input: input_,
    output,
    textsFor(targets) {
      const mask = typeof targets === 'number' ? targets : targetMask(targets)
      let texts = gathered[mask]
      if (texts === undefined) {
        texts = gather(mask)
        gathered[mask] = texts
      }
      return texts
    },
  }
}

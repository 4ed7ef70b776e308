import type { TARGETS } from '../schemas/policies.js'
import type { TargetText } from './types.js'

export type Target = (typeof TARGETS)[number]

export type MessageRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool'

export interface TextPart {
  type: 'text'
  text: string
}

export interface ConversationMessage {
  role: MessageRole
  content: string | readonly TextPart[]
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
  /** One per message, in order; `developer` reads as `system`. */
  readonly messages: readonly TargetText[]
  /** One per context document. */
  readonly context: readonly TargetText[]
  /** The last `user` message, or null. */
  readonly input: TargetText | null
  /** The last message when it is the assistant's, or null. */
  readonly output: TargetText | null
  /** The texts `targets` name, each once, in conversation order (messages, then documents). */
  textsFor(targets: readonly Target[] | TargetMask): readonly TargetText[]
}

/** A message's content as one text: parts joined with "\n". */
export function messageText(content: string | readonly TextPart[]): string {
  if (typeof content === 'string') return content
  if (content.length === 1) return content[0]?.text ?? ''
  return content.map((part) => part.text).join('\n')
}

/** Reads a conversation for evaluation. */
export function readConversation(input: ConversationInput): Conversation {
  const messages: TargetText[] = input.messages.map((m, index) => ({
    source: 'messages',
    index,
    role: m.role === 'developer' ? 'system' : m.role,
    text: messageText(m.content),
  }))
  const context: TargetText[] = (input.context ?? []).map((text, index) => ({
    source: 'context',
    index,
    role: 'context',
    text,
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
    for (const m of messages) {
      const byRole =
        (m.role === 'user' && roles & 1) ||
        (m.role === 'assistant' && roles & 2) ||
        (m.role === 'system' && roles & 4)
      if (byRole || (wantsInput && m === input_) || (wantsOutput && m === output)) texts.push(m)
    }
    if (mask & TARGET_BITS.context) texts.push(...context)
    return texts
  }

  return {
    messages,
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

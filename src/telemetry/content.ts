/**
 * A model call's messages as OpenTelemetry's GenAI conventions write them on its span
 * (`gen_ai.input.messages`, `gen_ai.output.messages`: JSON lists of `{role, parts}`), recorded only
 * with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (docs/tracing.md). Text and tool
 * calls are kept, each text cut to MAX_PART_LENGTH; an image's, audio's or file's data never is
 * (the part says its type only). A list longer than MAX_CONTENT_LENGTH as JSON loses messages:
 * the oldest of the input, the last choices of the output.
 */
import { MAX_CONTENT_LENGTH } from './redaction.js'

/** The most UTF-16 code units of one text of a message (its content, a call's arguments). */
export const MAX_PART_LENGTH = 8192

type Json = Record<string, unknown>
type Part = Json & { type: string }
interface Message {
  role: string
  parts: Part[]
  finish_reason?: string
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const cut = (text: string) =>
  text.length <= MAX_PART_LENGTH ? text : `${text.slice(0, MAX_PART_LENGTH - 1)}…`

const text = (value: unknown): string => (typeof value === 'string' ? cut(value) : '')

/** The parts of an OpenAI message's `content`: a string, or a list of typed parts. */
function contentParts(content: unknown): Part[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', content: cut(content) }]
  if (!Array.isArray(content)) return []
  return content.filter(isObject).map((part): Part => {
    if (part.type === 'text') return { type: 'text', content: text(part.text) }
    if (part.type === 'refusal') return { type: 'refusal', content: text(part.refusal) }
    // An image, audio or file: its kind only, never its data or address.
    return { type: typeof part.type === 'string' ? cut(part.type) : 'unknown' }
  })
}

/** A tool call of an OpenAI message as a `tool_call` part. */
const toolCallPart = (call: Json): Part => {
  const fn = isObject(call.function) ? call.function : {}
  return { type: 'tool_call', id: text(call.id), name: text(fn.name), arguments: text(fn.arguments) }
}

/** The messages sent to a model (an OpenAI `messages` list) in the conventions' form. */
export function inputMessages(messages: unknown): Message[] {
  if (!Array.isArray(messages)) return []
  return messages.filter(isObject).map((message) => {
    const role = typeof message.role === 'string' ? cut(message.role) : 'user'
    if (role === 'tool')
      return {
        role,
        parts: [
          {
            type: 'tool_call_response',
            id: text(message.tool_call_id),
            response: responseText(message.content),
          },
        ],
      }
    const parts = contentParts(message.content)
    if (Array.isArray(message.tool_calls))
      parts.push(...message.tool_calls.filter(isObject).map(toolCallPart))
    return { role, parts }
  })
}

/** A tool's result: its text, or its text parts joined. */
const responseText = (content: unknown): string =>
  typeof content === 'string'
    ? cut(content)
    : cut(
        contentParts(content)
          .map((p) => (typeof p.content === 'string' ? p.content : ''))
          .join(''),
      )

/** One choice of a reply as it is put together. */
interface ChoiceSoFar {
  role: string
  text: string
  refusal: string
  toolCalls: Map<number, { id: string; name: string; arguments: string }>
  finishReason: string
}

/** Appends `more` to `so_far`, up to one code unit past MAX_PART_LENGTH (then `cut` marks it). */
const grown = (soFar: string, more: unknown) =>
  typeof more === 'string' && soFar.length <= MAX_PART_LENGTH
    ? soFar + more.slice(0, MAX_PART_LENGTH + 1 - soFar.length)
    : soFar

/**
 * A model's reply put together from a chat completion or from a stream's chunks (each choice's
 * `message`, or its `delta`s in order), every text bounded as it grows.
 */
export class ReplyAssembler {
  private readonly choices = new Map<number, ChoiceSoFar>()

  /** A chat completion, or one chunk of a stream. */
  add(answer: unknown): void {
    if (!isObject(answer) || !Array.isArray(answer.choices)) return
    for (const choice of answer.choices) {
      if (!isObject(choice)) continue
      const index = typeof choice.index === 'number' ? choice.index : 0
      let soFar = this.choices.get(index)
      if (!soFar) {
        soFar = { role: 'assistant', text: '', refusal: '', toolCalls: new Map(), finishReason: '' }
        this.choices.set(index, soFar)
      }
      const said = isObject(choice.message) ? choice.message : isObject(choice.delta) ? choice.delta : {}
      if (typeof said.role === 'string') soFar.role = cut(said.role)
      soFar.text = grown(soFar.text, said.content)
      soFar.refusal = grown(soFar.refusal, said.refusal)
      if (Array.isArray(said.tool_calls))
        for (const [position, call] of said.tool_calls.entries()) {
          if (!isObject(call)) continue
          const at = typeof call.index === 'number' ? call.index : position
          const known = soFar.toolCalls.get(at) ?? { id: '', name: '', arguments: '' }
          const fn = isObject(call.function) ? call.function : {}
          known.id = grown(known.id, call.id)
          known.name = grown(known.name, fn.name)
          known.arguments = grown(known.arguments, fn.arguments)
          soFar.toolCalls.set(at, known)
        }
      if (typeof choice.finish_reason === 'string') soFar.finishReason = cut(choice.finish_reason)
    }
  }

  /** The reply's choices in order, in the conventions' form. */
  messages(): Message[] {
    return [...this.choices.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, choice]) => {
        const parts: Part[] = []
        if (choice.text) parts.push({ type: 'text', content: cut(choice.text) })
        if (choice.refusal) parts.push({ type: 'refusal', content: cut(choice.refusal) })
        for (const [, call] of [...choice.toolCalls.entries()].sort(([a], [b]) => a - b))
          parts.push({
            type: 'tool_call',
            id: cut(call.id),
            name: cut(call.name),
            arguments: cut(call.arguments),
          })
        return { role: choice.role, parts, finish_reason: choice.finishReason || 'stop' }
      })
  }
}

/**
 * `messages` as JSON of at most MAX_CONTENT_LENGTH code units: the oldest dropped first (`keep`
 * `last`, an input) or the last (`first`, a reply's choices) until the rest fits.
 */
export function messagesJson(messages: Message[], keep: 'first' | 'last'): string {
  const lengths = messages.map((m) => JSON.stringify(m).length + 1)
  let total = lengths.reduce((sum, n) => sum + n, 1)
  let from = 0
  let to = messages.length
  while (total > MAX_CONTENT_LENGTH && from < to) {
    total -= (keep === 'last' ? lengths[from++] : lengths[--to]) as number
  }
  return JSON.stringify(messages.slice(from, to))
}

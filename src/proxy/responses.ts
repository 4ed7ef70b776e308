/**
 * OpenAI's Responses API as Warden reads and writes it (docs/agents.md, CONTRACT section 14):
 * the request's `instructions` and `input` items as the conversation an evaluation reads (in
 * Chat Completions' shape, the evaluator's), the masked conversation written back into the items
 * sent upstream, a response's output items as the reply an output evaluation reads, and the
 * response that stands in for a failed input or output. Pure: no I/O.
 */
import { randomUUID } from 'node:crypto'
import { maskMessages, restoreText, unnumbered } from '../rules/masking.js'
import type { ChatMessage, ContentPart, ToolCall } from '../schemas/messages.js'
import type { ReplyMasking, ReplyOfChoice } from './completions.js'
import type { UpstreamApi } from './upstream.js'

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** What of the request a policy did not read: an input item's part, a whole item (`part` null). */
export interface ResponsesNotRead {
  /** The item's index in `input`. */
  item: number
  /** The part's index in the item's content (or output); null for the whole item. */
  part: number | null
  /** The part's or the item's type (`input_image`, `input_file`, `reasoning`, …). */
  type: string
}

/** Where a message of the evaluated conversation comes from in the request. */
type Origin =
  | { from: 'instructions' }
  | { from: 'input' }
  | { from: 'item'; item: number; shape: 'message' | 'call' | 'output' }

/** The request read as a conversation (Chat Completions' shape), with where each message came from. */
export interface ResponsesConversation {
  /** As sent: text parts kept in place, other parts as `{type}` (not read). */
  messages: ChatMessage[]
  origins: Origin[]
  notRead: ResponsesNotRead[]
}

/** The part types whose text is read: OpenAI's input and output text parts, a refusal. */
const TEXT_PARTS = new Set(['input_text', 'output_text', 'text'])
const ROLES = new Set(['system', 'developer', 'user', 'assistant'])

/** A content list's parts as chat parts: text and refusal parts read, others named (not read). */
function partsOf(parts: readonly unknown[], item: number, notRead: ResponsesNotRead[]): ContentPart[] {
  return parts.map((part, p): ContentPart => {
    if (isObject(part) && TEXT_PARTS.has(String(part.type)) && typeof part.text === 'string')
      return { type: 'text', text: part.text }
    if (isObject(part) && part.type === 'refusal' && typeof part.refusal === 'string')
      return { type: 'refusal', refusal: part.refusal }
    const type = isObject(part) && typeof part.type === 'string' ? part.type : 'unknown'
    notRead.push({ item, part: p, type })
    return { type }
  })
}

/**
 * The request's conversation: `instructions` as a system message, a string `input` as a user
 * message, each input item as its message: `message` items by role, `function_call` (and
 * `custom_tool_call`) items as an assistant turn's tool call, `function_call_output` (and
 * `custom_tool_call_output`) items as a tool result. Other items (reasoning, item references,
 * built-in tools' calls) are passed on and named.
 */
export function readResponsesInput(request: {
  instructions?: unknown
  input?: unknown
}): ResponsesConversation {
  const messages: ChatMessage[] = []
  const origins: Origin[] = []
  const notRead: ResponsesNotRead[] = []
  if (typeof request.instructions === 'string') {
    messages.push({ role: 'system', content: request.instructions })
    origins.push({ from: 'instructions' })
  }
  if (typeof request.input === 'string') {
    messages.push({ role: 'user', content: request.input })
    origins.push({ from: 'input' })
  } else if (Array.isArray(request.input))
    request.input.forEach((item: unknown, index) => {
      if (!isObject(item)) return
      const type = typeof item.type === 'string' ? item.type : 'message'
      if (type === 'message' && ROLES.has(String(item.role))) {
        const content = item.content
        messages.push({
          role: item.role as ChatMessage['role'],
          content:
            typeof content === 'string'
              ? content
              : Array.isArray(content)
                ? partsOf(content, index, notRead)
                : '',
        })
        origins.push({ from: 'item', item: index, shape: 'message' })
      } else if (type === 'function_call' || type === 'custom_tool_call') {
        const id = String(item.call_id ?? item.id ?? '')
        const call: ToolCall =
          type === 'function_call'
            ? {
                id,
                type: 'function',
                function: { name: String(item.name ?? ''), arguments: String(item.arguments ?? '') },
              }
            : {
                id,
                type: 'custom',
                custom: { name: String(item.name ?? ''), input: String(item.input ?? '') },
              }
        messages.push({ role: 'assistant', content: '', tool_calls: [call] })
        origins.push({ from: 'item', item: index, shape: 'call' })
      } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
        const output = item.output
        messages.push({
          role: 'tool',
          tool_call_id: String(item.call_id ?? ''),
          content:
            typeof output === 'string'
              ? output
              : Array.isArray(output)
                ? partsOf(output, index, notRead)
                : '',
        })
        origins.push({ from: 'item', item: index, shape: 'output' })
      } else notRead.push({ item: index, part: null, type })
    })
  return { messages, origins, notRead }
}

/** A chat part's text back in the Responses part it came from. */
function partBack(original: unknown, masked: ContentPart | undefined): unknown {
  if (!isObject(original) || masked === undefined) return original
  if (masked.type === 'text' && typeof masked.text === 'string') return { ...original, text: masked.text }
  if (masked.type === 'refusal' && typeof masked.refusal === 'string')
    return { ...original, refusal: masked.refusal }
  return original
}

function contentBack(original: unknown, masked: ChatMessage['content']): unknown {
  if (typeof masked === 'string') return typeof original === 'string' ? masked : original
  if (Array.isArray(original) && Array.isArray(masked))
    return original.map((part, p) => partBack(part, masked[p] as ContentPart | undefined))
  return original
}

/**
 * The request's `instructions` and `input` with the masked conversation written back in place
 * (docs/masking.md): text parts, a call's arguments, a tool result's output; everything else as
 * sent.
 */
export function maskedRequest(body: Json, read: ResponsesConversation, masked: readonly ChatMessage[]): Json {
  const out: Json = { ...body }
  const items = Array.isArray(body.input) ? [...(body.input as unknown[])] : null
  read.origins.forEach((origin, m) => {
    const message = masked[m]
    if (message === undefined) return
    if (origin.from === 'instructions') out.instructions = message.content
    else if (origin.from === 'input') out.input = message.content
    else if (items !== null) {
      const item = items[origin.item]
      if (!isObject(item)) return
      if (origin.shape === 'message')
        items[origin.item] = { ...item, content: contentBack(item.content, message.content ?? null) }
      else if (origin.shape === 'output')
        items[origin.item] = { ...item, output: contentBack(item.output, message.content ?? null) }
      else {
        const call = message.tool_calls?.[0]
        if (call?.function && typeof item.arguments === 'string')
          items[origin.item] = { ...item, arguments: call.function.arguments }
        else if (call?.custom && typeof item.input === 'string')
          items[origin.item] = { ...item, input: call.custom.input }
      }
    }
  })
  if (items !== null) out.input = items
  return out
}

/** One text of a response's output: the item and part it stands in, its field. */
interface OutputText {
  item: number
  part: number
  field: 'text' | 'refusal'
  text: string
}

/** The texts and the calls of a response's output items, in order. */
function outputOf(output: readonly unknown[]): {
  texts: OutputText[]
  calls: { item: number; call: ToolCall }[]
} {
  const texts: OutputText[] = []
  const calls: { item: number; call: ToolCall }[] = []
  output.forEach((item, i) => {
    if (!isObject(item)) return
    if (item.type === 'message' && Array.isArray(item.content))
      item.content.forEach((part: unknown, p) => {
        if (!isObject(part)) return
        if (part.type === 'output_text' && typeof part.text === 'string')
          texts.push({ item: i, part: p, field: 'text', text: part.text })
        else if (part.type === 'refusal' && typeof part.refusal === 'string')
          texts.push({ item: i, part: p, field: 'refusal', text: part.refusal })
      })
    else if (item.type === 'function_call')
      calls.push({
        item: i,
        call: {
          id: String(item.call_id ?? item.id ?? ''),
          type: 'function',
          function: { name: String(item.name ?? ''), arguments: String(item.arguments ?? '') },
        },
      })
    else if (item.type === 'custom_tool_call')
      calls.push({
        item: i,
        call: {
          id: String(item.call_id ?? item.id ?? ''),
          type: 'custom',
          custom: { name: String(item.name ?? ''), input: String(item.input ?? '') },
        },
      })
  })
  return { texts, calls }
}

/**
 * What a response says, as an output evaluation reads it: its output text and refusal parts
 * joined with "\n" (null when none), its function calls' arguments.
 */
export function responseReply(response: { output?: unknown }): ReplyOfChoice {
  const { texts, calls } = outputOf(Array.isArray(response.output) ? response.output : [])
  return {
    text: texts.length === 0 ? null : texts.map((t) => t.text).join('\n'),
    toolCalls: calls.map((c) => c.call),
  }
}

/**
 * A response with its output masked (docs/masking.md): an output mask rule's findings replaced by
 * `[KIND]` (each part its share of the spans, as the joined text was read), then the input's
 * placeholders put back (JSON-escaped in arguments).
 */
export function maskedResponse(response: Json, masking: ReplyMasking): Json {
  if (masking.plan === null && masking.values.size === 0) return response
  const output = Array.isArray(response.output) ? (response.output as unknown[]) : []
  const { texts, calls } = outputOf(output)
  let parts: ContentPart[] = texts.map((t) =>
    t.field === 'text' ? { type: 'text', text: t.text } : { type: 'refusal', refusal: t.text },
  )
  let toolCalls = calls.map((c) => c.call)
  const { plan, index, values } = masking
  if (plan !== null) {
    const spans = plan.texts.filter((t) => t.source === 'messages' && t.index === index)
    if (spans.length > 0) {
      const [masked] = maskMessages(
        [{ role: 'assistant', content: parts, tool_calls: toolCalls }] as ChatMessage[],
        { ...plan, texts: spans.map((t) => ({ ...t, index: 0 })) },
        unnumbered(plan),
      )
      parts = (masked?.content as ContentPart[] | undefined) ?? parts
      toolCalls = (masked?.tool_calls as ToolCall[] | undefined) ?? toolCalls
    }
  }
  const items = output.map((item) => (isObject(item) ? { ...item } : item)) as Json[]
  texts.forEach((t, k) => {
    const item = items[t.item] as Json
    const content = [...(item.content as Json[])]
    const text = (parts[k]?.[t.field] as string | undefined) ?? t.text
    content[t.part] = { ...content[t.part], [t.field]: restoreText(text, values) }
    item.content = content
  })
  calls.forEach((c, k) => {
    const item = items[c.item] as Json
    const call = toolCalls[k]
    if (call?.function) item.arguments = restoreText(call.function.arguments ?? '', values, true)
    else if (call?.custom) item.input = restoreText(call.custom.input ?? '', values, true)
  })
  const out: Json = { ...response, output: items }
  if (typeof response.output_text === 'string') out.output_text = responseReply(out).text ?? ''
  return out
}

/** An assistant message item holding `text` (the override; empty for block). */
export function overrideItem(text: string): Json {
  return {
    type: 'message',
    id: `msg_${randomUUID().replaceAll('-', '')}`,
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
  }
}

/** A response's output replaced by the override (status incomplete, reason content_filter). */
export function replacedResponse(response: Json, text: string, warden: Json): Json {
  const out: Json = {
    ...response,
    status: 'incomplete',
    incomplete_details: { reason: 'content_filter' },
    output: [overrideItem(text)],
  }
  if ('output_text' in response) out.output_text = text
  out.warden = warden
  return out
}

/** Zero usage: the upstream was not called. */
const NO_USAGE = {
  input_tokens: 0,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 0,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 0,
}

/**
 * The response Warden writes itself when the input stopped the call, in the shape of OpenAI's
 * Response object: the request's settings echoed, no output yet (`replacedResponse` adds it).
 */
export function responseShell(body: Json, model: string, createdAt: number): Json {
  return {
    id: `resp_${randomUUID().replaceAll('-', '')}`,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: body.reasoning ?? { effort: null, summary: null },
    store: body.store ?? true,
    temperature: body.temperature ?? null,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? null,
    truncation: body.truncation ?? 'disabled',
    usage: NO_USAGE,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  }
}

/** The JSON type of a value as a problem names it. */
const typeOf = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : typeof value === 'object'
        ? 'an object'
        : `a ${typeof value}`

/**
 * Why an output item has a field Warden reads of another type (it would reach the client unread);
 * null when every read field is as OpenAI's reference has it.
 */
function itemProblem(item: Json, at: string): string | null {
  if (item.type === 'message') {
    if (!Array.isArray(item.content)) return `has ${at}.content that is ${typeOf(item.content)}, not an array`
    for (const [i, part] of item.content.entries()) {
      if (!isObject(part)) return `has ${at}.content[${i}] that is ${typeOf(part)}, not an object`
      const field = part.type === 'output_text' ? 'text' : part.type === 'refusal' ? 'refusal' : null
      if (field !== null && typeof part[field] !== 'string')
        return `has ${at}.content[${i}].${field} that is ${typeOf(part[field])}, not a string`
    }
  }
  if (item.type === 'function_call') {
    for (const field of ['name', 'arguments'])
      if (typeof item[field] !== 'string')
        return `has ${at}.${field} that is ${typeOf(item[field])}, not a string`
  }
  if (item.type === 'custom_tool_call') {
    for (const field of ['name', 'input'])
      if (typeof item[field] !== 'string')
        return `has ${at}.${field} that is ${typeOf(item[field])}, not a string`
  }
  return null
}

/** Why `value` is no response Warden can relay; null when it is one. */
export function responseProblem(value: unknown): string | null {
  if (!isObject(value)) return 'is not a JSON object'
  if (!Array.isArray(value.output)) return 'has no output list'
  for (const [i, item] of value.output.entries()) {
    if (!isObject(item)) return `has output[${i}] that is ${typeOf(item)}, not an object`
    const problem = itemProblem(item, `output[${i}]`)
    if (problem !== null) return problem
  }
  return null
}

/** The string field each streamed event Warden reads carries its text in. */
const EVENT_TEXT: Record<string, string> = {
  'response.output_text.delta': 'delta',
  'response.refusal.delta': 'delta',
  'response.function_call_arguments.delta': 'delta',
  'response.custom_tool_call_input.delta': 'delta',
  'response.output_text.done': 'text',
  'response.refusal.done': 'refusal',
  'response.function_call_arguments.done': 'arguments',
}

/** Why a streamed event has a field Warden reads of another type; null when it can be relayed. */
function eventProblem(value: unknown): string | null {
  if (!isObject(value) || typeof value.type !== 'string') return 'is not an event with a type'
  const field = EVENT_TEXT[value.type]
  if (field !== undefined && typeof value[field] !== 'string')
    return `is ${value.type} with ${field} that is ${typeOf(value[field])}, not a string`
  // An item is read whole when it is done; `added` announces it, its fields may still be absent.
  if (value.type === 'response.output_item.done' && isObject(value.item)) {
    const problem = itemProblem(value.item, 'item')
    if (problem !== null) return `is ${value.type} that ${problem}`
  }
  if (TERMINAL_EVENTS.has(value.type) && isObject(value.response) && Array.isArray(value.response.output)) {
    const problem = responseProblem(value.response)
    if (problem !== null) return `is ${value.type} whose response ${problem}`
  }
  return null
}

/** The terminal events of a Responses stream. */
export const TERMINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed'])

/** OpenAI's Responses API, as the upstream client calls it (src/proxy/upstream.ts). */
export const RESPONSES_API: UpstreamApi = {
  path: 'responses',
  reply: 'response',
  replyProblem: responseProblem,
  eventProblem,
  eventError: (value) => {
    if (!isObject(value)) return null
    if (value.type === 'error') return typeof value.message === 'string' ? value.message : 'no message'
    if (value.type === 'response.failed') {
      const error = isObject(value.response) ? value.response.error : null
      return isObject(error) && typeof error.message === 'string' ? error.message : 'the response failed'
    }
    return null
  },
  complete: (events) => events.some((e) => TERMINAL_EVENTS.has(String(e.type))),
}

/** The model list an application answers (`GET …/models`): its model, or none. */
export function modelList(application: {
  model: string | null
  provider: string | null
  created: number
}): Json {
  return {
    object: 'list',
    data:
      application.model === null
        ? []
        : [
            {
              id: application.model,
              object: 'model',
              created: application.created,
              owned_by: application.provider ?? 'warden',
            },
          ],
  }
}

/** An output item as its `output_item.added` event shows it: nothing of its content yet. */
function startedItem(item: Json): Json {
  if (item.type === 'message') return { ...item, status: 'in_progress', content: [] }
  if (item.type === 'function_call') return { ...item, status: 'in_progress', arguments: '' }
  if (item.type === 'custom_tool_call') return { ...item, input: '' }
  return item
}

/** A part as its `content_part.added` event shows it: empty. */
function startedPart(part: Json): Json {
  if (part.type === 'output_text') return { ...part, text: '', annotations: [] }
  if (part.type === 'refusal') return { ...part, refusal: '' }
  return part
}

/**
 * The events of OpenAI's Responses stream that spell `response` whole: `response.created` and
 * `response.in_progress`, each output item added, its parts and their text in one delta each (a
 * function call's arguments in one delta), each done, then the terminal event its status names
 * (`response.completed`, `response.incomplete`, `response.failed`). Numbered from 0.
 */
export function responseEvents(response: Json): Json[] {
  const events: Json[] = []
  const started: Json = { ...response, status: 'in_progress', output: [], incomplete_details: null }
  if ('output_text' in started) started.output_text = ''
  const { warden: _, ...startedShell } = started
  events.push({ type: 'response.created', response: startedShell })
  events.push({ type: 'response.in_progress', response: startedShell })
  const output = Array.isArray(response.output) ? (response.output as Json[]) : []
  output.forEach((item, output_index) => {
    events.push(...itemEvents(item, output_index))
  })
  const terminal =
    response.status === 'incomplete'
      ? 'response.incomplete'
      : response.status === 'failed'
        ? 'response.failed'
        : 'response.completed'
  events.push({ type: terminal, response })
  return events.map((event, sequence_number) => ({ ...event, sequence_number }))
}

/**
 * The events that spell one output item whole, unnumbered: added, its parts and their text in
 * one delta each (a function call's arguments in one delta), each done.
 */
export function itemEvents(item: Json, output_index: number): Json[] {
  const events: Json[] = [{ type: 'response.output_item.added', output_index, item: startedItem(item) }]
  const item_id = item.id
  if (item.type === 'message' && Array.isArray(item.content))
    (item.content as Json[]).forEach((part, content_index) => {
      events.push({
        type: 'response.content_part.added',
        item_id,
        output_index,
        content_index,
        part: startedPart(part),
      })
      if (part.type === 'output_text') {
        const text = String(part.text ?? '')
        events.push({
          type: 'response.output_text.delta',
          item_id,
          output_index,
          content_index,
          delta: text,
          logprobs: [],
        })
        events.push({
          type: 'response.output_text.done',
          item_id,
          output_index,
          content_index,
          text,
          logprobs: [],
        })
      } else if (part.type === 'refusal') {
        const refusal = String(part.refusal ?? '')
        events.push({ type: 'response.refusal.delta', item_id, output_index, content_index, delta: refusal })
        events.push({ type: 'response.refusal.done', item_id, output_index, content_index, refusal })
      }
      events.push({ type: 'response.content_part.done', item_id, output_index, content_index, part })
    })
  else if (item.type === 'function_call') {
    const args = String(item.arguments ?? '')
    events.push({ type: 'response.function_call_arguments.delta', item_id, output_index, delta: args })
    events.push({
      type: 'response.function_call_arguments.done',
      item_id,
      output_index,
      name: item.name,
      arguments: args,
    })
  } else if (item.type === 'custom_tool_call') {
    const input = String(item.input ?? '')
    events.push({ type: 'response.custom_tool_call_input.delta', item_id, output_index, delta: input })
    events.push({ type: 'response.custom_tool_call_input.done', item_id, output_index, input })
  }
  events.push({ type: 'response.output_item.done', output_index, item })
  return events
}

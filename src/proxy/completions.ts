/**
 * The pure parts of a guarded chat completion (docs/chat-completions.md): the body sent upstream, the
 * conversation as the evaluator reads it, the text of each choice of a reply, and the answers
 * Warden sends, as a JSON completion or as OpenAI's server-sent events. No I/O here.
 */
import { readableMessages } from '../rules/conversation.js'
import { failedRules } from '../rules/failed-rules.js'
import { type MaskPlan, maskMessages, restoreText, unnumbered } from '../rules/masking.js'
import type { Application } from '../schemas/applications.js'
import type {
  ChatCompletionRequest,
  ChatMessage,
  FailedRuleOutcome,
  WardenOutcome,
} from '../schemas/chat-completions.js'
import type { Evaluation, EvaluationRequest } from '../schemas/evaluations.js'
import type { ToolCall } from '../schemas/messages.js'

export type Action = WardenOutcome['action']
export type EvaluatedMessage = EvaluationRequest['messages'][number]

/**
 * The rules that failed an evaluation of a chat completion, as its `warden.failed` names them
 * (docs/chat-completions.md, "Reasons"): `evaluation` input or output, the choice for an output.
 * `policies` are the evaluation's, or, for a streamed window that failed, the window's.
 */
export function failedIn(
  evaluation: 'input' | 'output',
  id: string,
  choice: number | null,
  policies: Pick<Evaluation, 'policies'>,
): FailedRuleOutcome[] {
  return failedRules(policies).map((rule) => ({ evaluation, evaluation_id: id, choice, ...rule }))
}

/** What a choice of a reply says: its text (null when none) and its tool calls (docs/agents.md). */
export interface ReplyOfChoice {
  text: string | null
  toolCalls: ToolCall[]
}
type Json = Record<string, unknown>

/** One event of an upstream stream: its data as received, and parsed. */
export interface StreamChunk {
  raw: string
  chunk: Json
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The body sent upstream: the request exactly as sent, with the application's model and
 * parameters where the request sets none, and its system prompt first when the conversation has
 * no system or developer message. `max_tokens` is a default only when the request sets neither it
 * nor `max_completion_tokens` (OpenAI refuses both at once). `top_k` is not OpenAI's: it is sent
 * only when the request or the application sets it, so an application without it can talk to
 * OpenAI itself.
 */
export function upstreamBody(request: ChatCompletionRequest, application: Application, model: string): Json {
  const body: Json = { ...request, model }
  const parameters = application.parameters
  if (parameters) {
    if (request.temperature == null && parameters.temperature !== null)
      body.temperature = parameters.temperature
    if (request.top_p == null && parameters.top_p !== null) body.top_p = parameters.top_p
    if (request.max_tokens == null && request.max_completion_tokens == null && parameters.max_tokens !== null)
      body.max_tokens = parameters.max_tokens
    if (request.top_k == null && parameters.top_k !== null) body.top_k = parameters.top_k
    const prompt = parameters.system_prompt
    if (prompt && !request.messages.some((m) => m.role === 'system' || m.role === 'developer'))
      body.messages = [{ role: 'system', content: prompt }, ...request.messages]
  }
  if (body.top_k === null) delete body.top_k
  return body
}

/** The text parts of a content array, joined with "\n" as an evaluation joins them (docs/evaluation.md). */
function partsText(parts: readonly unknown[]): string {
  const texts: string[] = []
  for (const part of parts) {
    if (!isObject(part)) continue
    if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text)
    else if (part.type === 'refusal' && typeof part.refusal === 'string') texts.push(part.refusal)
  }
  return texts.join('\n')
}

/**
 * The conversation as the evaluator reads it (src/rules/conversation.ts `readableMessages`):
 * every message's text (string content, or its text and refusal parts; an assistant turn without
 * content reads as its refusal, or as empty), `function` read as `tool`, tool results read by the
 * context target and tool calls kept with their arguments (docs/agents.md). Images, audio and
 * files are passed on and not read.
 */
export function evaluatedMessages(messages: readonly ChatMessage[]): EvaluatedMessage[] {
  return readableMessages(messages).messages
}

/** Texts joined as one reply's text: those present, with "\n" between them; null when none is. */
function joined(...texts: (string | null)[]): string | null {
  const present = texts.filter((t): t is string => t !== null)
  return present.length === 0 ? null : present.join('\n')
}

/**
 * The text a reply's message shows a user: its content and its refusal, both when both are there
 * (an upstream is not trusted to send only one); null when it has neither (tool calls only).
 */
function messageText(message: unknown): string | null {
  if (!isObject(message)) return null
  const content =
    typeof message.content === 'string'
      ? message.content
      : Array.isArray(message.content)
        ? partsText(message.content)
        : null
  return joined(content, typeof message.refusal === 'string' ? message.refusal : null)
}

/**
 * The fields of a reply's message, or of a streamed delta, that Warden relays: its text (content
 * and refusal, which the output policies read), its role, and its tool calls. Anything else an
 * upstream sends (reasoning text, audio and its transcript, annotations, fields of its own) is
 * text no policy read, and is dropped: an upstream is not trusted to put text only where it is
 * evaluated.
 */
const RELAYED_FIELDS: ReadonlySet<string> = new Set([
  'role',
  'content',
  'refusal',
  'tool_calls',
  'function_call',
])

/** A message or delta with only the fields Warden relays; the same object when it has no other. */
export function relayedFields(message: Json): Json {
  let relayed: Json | null = null
  for (const key of Object.keys(message)) {
    if (RELAYED_FIELDS.has(key)) continue
    relayed ??= { ...message }
    delete relayed[key]
  }
  return relayed ?? message
}

/**
 * A completion's or a chunk's choices with their messages or deltas as `relayedFields` leaves
 * them, and without their log probabilities when `guarded`: the tokens there, and their
 * alternatives, are text of their own that no policy read. The same object when none changed.
 */
function relayedChoices<T extends { choices: Json[] }>(
  reply: T,
  field: 'message' | 'delta',
  guarded: boolean,
): T {
  let changed = false
  const choices = reply.choices.map((choice) => {
    const inner = choice[field]
    const relayed = isObject(inner) ? relayedFields(inner) : inner
    const dropLogprobs = guarded && choice.logprobs !== undefined && choice.logprobs !== null
    if (relayed === inner && !dropLogprobs) return choice
    changed = true
    return { ...choice, [field]: relayed, ...(dropLogprobs ? { logprobs: null } : {}) }
  })
  return changed ? { ...reply, choices } : reply
}

/**
 * What a reply must be for Warden to relay it (docs/chat-completions.md, "What a reply must
 * be"): every field the output policies read has the type OpenAI's API gives it. A field of
 * another type (content as a number or an object, arguments as an object, a tool-call piece
 * without its index) would reach the client unread, so the reply is the provider's error
 * instead. Fields no policy reads are dropped on the way out (`relayedFields`), except a choice's
 * `text` (the legacy Completions API's): a reply carrying it is refused, not emptied.
 */
type Shape = 'message' | 'delta'

/** Why `value` is no chat completion Warden can relay, as "choices/0/message/content is a number"; null when it is one. */
export function completionProblem(value: unknown): string | null {
  return choicesProblem(value, 'message')
}

/** Why `value` is no chat completion chunk Warden can relay; null when it is one. */
export function chunkProblem(value: unknown): string | null {
  return choicesProblem(value, 'delta')
}

export function isCompletion(value: unknown): value is Json & { choices: Json[] } {
  return completionProblem(value) === null
}

export function isChunk(value: unknown): value is Json & { choices: Json[] } {
  return chunkProblem(value) === null
}

/** The JSON type of a value as a problem names it. */
function typeName(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object'
  return `a ${typeof value}`
}

const isOptional = (value: unknown, type: 'string' | 'object'): boolean =>
  value === undefined || value === null || (type === 'object' ? isObject(value) : typeof value === type)

function choicesProblem(value: unknown, shape: Shape): string | null {
  if (!isObject(value)) return `is ${typeName(value)}, not an object`
  if (!Array.isArray(value.choices)) return `has choices that are ${typeName(value.choices)}, not an array`
  for (const [i, choice] of value.choices.entries()) {
    const at = `choices/${i}`
    if (!isObject(choice)) return `has ${at} that is ${typeName(choice)}`
    if (!Number.isInteger(choice.index) || (choice.index as number) < 0)
      return `has ${at}/index that is not a choice index`
    if (choice.text !== undefined)
      return `has ${at}/text, the legacy Completions API's field, which no policy reads`
    if (!isOptional(choice.finish_reason, 'string'))
      return `has ${at}/finish_reason that is ${typeName(choice.finish_reason)}`
    const inner = choice[shape]
    if (shape === 'message' ? !isObject(inner) : !isOptional(inner, 'object'))
      return `has ${at}/${shape} that is ${typeName(inner)}`
    if (isObject(inner)) {
      const problem = messageProblem(inner, shape)
      if (problem !== null) return `has ${at}/${shape}/${problem}`
    }
  }
  return null
}

/** Why a message or delta's read fields are not what OpenAI's API gives them, as "content that is a number"; null when they are. */
function messageProblem(message: Json, shape: Shape): string | null {
  const { content, refusal } = message
  if (Array.isArray(content) && shape === 'message') {
    for (const [p, part] of content.entries()) {
      const text = isObject(part)
        ? part.type === 'text'
          ? part.text
          : part.type === 'refusal'
            ? part.refusal
            : undefined
        : undefined
      if (typeof text !== 'string')
        return isObject(part) &&
          typeof part.type === 'string' &&
          part.type !== 'text' &&
          part.type !== 'refusal'
          ? `content/${p} of type "${part.type.slice(0, 40)}", which no policy reads`
          : `content/${p} that is not a text part`
    }
  } else if (!isOptional(content, 'string')) return `content that is ${typeName(content)}`
  if (!isOptional(refusal, 'string')) return `refusal that is ${typeName(refusal)}`
  const calls = message.tool_calls
  if (calls !== undefined && calls !== null) {
    if (!Array.isArray(calls)) return `tool_calls that are ${typeName(calls)}`
    for (const [c, call] of calls.entries()) {
      const problem = toolCallProblem(call, shape)
      if (problem !== null) return `tool_calls/${c}${problem}`
    }
  }
  const legacy = message.function_call
  if (legacy !== undefined && legacy !== null) {
    if (!isObject(legacy)) return `function_call that is ${typeName(legacy)}`
    const problem = functionProblem(legacy, shape)
    if (problem !== null) return `function_call/${problem}`
  }
  return null
}

/** Why a tool call (or a streamed piece of one) is not one, as " that is a string" or "/function/arguments that is an object". */
function toolCallProblem(call: unknown, shape: Shape): string | null {
  if (!isObject(call)) return ` that is ${typeName(call)}`
  // A streamed piece says which call it belongs to; without its index it belongs to none.
  if (shape === 'delta' && (!Number.isInteger(call.index) || (call.index as number) < 0))
    return ' without an index'
  if (!isOptional(call.id, 'string')) return `/id that is ${typeName(call.id)}`
  if (call.type === 'custom' || isObject(call.custom)) {
    const custom = call.custom
    if (!isObject(custom)) return `/custom that is ${typeName(custom)}`
    if (!isOptional(custom.name, 'string')) return `/custom/name that is ${typeName(custom.name)}`
    if (typeof custom.input !== 'string' && !(shape === 'delta' && custom.input === undefined))
      return `/custom/input that is ${typeName(custom.input)}`
    return null
  }
  const fn = call.function
  if (shape === 'delta' ? !isOptional(fn, 'object') : !isObject(fn))
    return `/function that is ${typeName(fn)}`
  if (!isObject(fn)) return null
  const problem = functionProblem(fn, shape)
  return problem === null ? null : `/function/${problem}`
}

/** Why a function call's name or arguments are not strings (a streamed piece may leave either out). */
function functionProblem(fn: Json, shape: Shape): string | null {
  const optional = shape === 'delta'
  if (optional ? !isOptional(fn.name, 'string') : typeof fn.name !== 'string')
    return `name that is ${typeName(fn.name)}`
  if (optional ? !isOptional(fn.arguments, 'string') : typeof fn.arguments !== 'string')
    return `arguments that are ${typeName(fn.arguments)}`
  return null
}

/**
 * A reply's tool calls as objects (anything else an upstream puts there reads as nothing). A
 * reply in OpenAI's deprecated shape (`function_call`, answering `functions`) reads as one call:
 * its arguments leave like a tool call's, and are read as call 0.
 */
function toolCallsOf(message: unknown): ToolCall[] {
  if (!isObject(message)) return []
  if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0)
    return message.tool_calls.filter(isObject) as ToolCall[]
  if (isObject(message.function_call)) return [{ type: 'function', function: message.function_call }]
  return []
}

/** What each choice of a completion says, by choice index: its text and its tool calls. */
export function completionReplies(completion: { choices: Json[] }): Map<number, ReplyOfChoice> {
  const replies = new Map<number, ReplyOfChoice>()
  for (const choice of completion.choices)
    replies.set(choice.index as number, {
      text: messageText(choice.message),
      toolCalls: toolCallsOf(choice.message),
    })
  return replies
}

/** A tool call as its streamed pieces add up: `index` is its position in the reply's tool_calls. */
export interface StreamedCall {
  id?: string
  type?: string
  name?: string
  arguments: string
}

/** A streamed choice as its deltas add up: its content, its refusal and its tool calls, each read whole. */
interface StreamedChoice {
  content: string | null
  refusal: string | null
  calls: Map<number, StreamedCall>
  finished: boolean
}

/**
 * Adds one streamed delta's tool-call pieces to the calls they belong to (by their `index`):
 * the id, type and name as first sent, the arguments appended.
 */
export function addToolCallPieces(calls: Map<number, StreamedCall>, pieces: unknown): void {
  if (!Array.isArray(pieces)) return
  for (const piece of pieces) {
    if (!isObject(piece) || typeof piece.index !== 'number') continue
    let call = calls.get(piece.index)
    if (!call) {
      call = { arguments: '' }
      calls.set(piece.index, call)
    }
    if (typeof piece.id === 'string') call.id ??= piece.id
    if (typeof piece.type === 'string') call.type ??= piece.type
    const fn = piece.function
    if (isObject(fn)) {
      if (typeof fn.name === 'string') call.name ??= fn.name
      if (typeof fn.arguments === 'string') call.arguments += fn.arguments
    }
  }
}

/** Streamed calls as a message's tool_calls, in the order of their index. */
export function streamedToolCalls(calls: ReadonlyMap<number, StreamedCall>): ToolCall[] {
  return [...calls]
    .sort(([a], [b]) => a - b)
    .map(([, call]) => ({
      ...(call.id !== undefined ? { id: call.id } : {}),
      type: call.type ?? 'function',
      function: { ...(call.name !== undefined ? { name: call.name } : {}), arguments: call.arguments },
    }))
}

/** What each choice of a stream says, by choice index, and whether every choice finished. */
export function streamReplies(chunks: readonly StreamChunk[]): {
  replies: Map<number, ReplyOfChoice>
  finished: boolean
} {
  const choices = new Map<number, StreamedChoice>()
  for (const { chunk } of chunks) {
    for (const choice of chunk.choices as Json[]) {
      const index = choice.index as number
      let state = choices.get(index)
      if (!state) {
        state = { content: null, refusal: null, calls: new Map(), finished: false }
        choices.set(index, state)
      }
      const delta = choice.delta
      if (isObject(delta)) {
        if (typeof delta.content === 'string') state.content = (state.content ?? '') + delta.content
        if (typeof delta.refusal === 'string') state.refusal = (state.refusal ?? '') + delta.refusal
        addToolCallPieces(state.calls, delta.tool_calls)
        // OpenAI's deprecated function_call streams as one call: call 0.
        if (isObject(delta.function_call))
          addToolCallPieces(state.calls, [{ index: 0, function: delta.function_call }])
      }
      if (typeof choice.finish_reason === 'string') state.finished = true
    }
  }
  const replies = new Map<number, ReplyOfChoice>()
  let finished = choices.size > 0
  for (const [index, state] of choices) {
    replies.set(index, {
      text: joined(state.content, state.refusal),
      toolCalls: streamedToolCalls(state.calls),
    })
    if (!state.finished) finished = false
  }
  return { replies, finished }
}

/** The text that stands in for a stopped input or a failed choice: the override, or nothing for block. */
export const replacementText = (overrideResponse: string | null): string => overrideResponse ?? ''

/** A choice of a JSON completion that replaces the model's. */
export const replacedChoice = (index: number, text: string): Json => ({
  index,
  message: { role: 'assistant', content: text, refusal: null },
  logprobs: null,
  finish_reason: 'content_filter',
})

export interface CompletionShell {
  id: string
  created: number
  model: string
}

const ZERO_USAGE = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }

/** The JSON completion sent when the input failed: every one of the `n` choices holds the replacement. */
export function stoppedCompletion(
  shell: CompletionShell,
  n: number,
  text: string,
  warden: WardenOutcome,
): string {
  const choices = Array.from({ length: n }, (_, i) => replacedChoice(i, text))
  return JSON.stringify({
    id: shell.id,
    object: 'chat.completion',
    created: shell.created,
    model: shell.model,
    choices,
    usage: ZERO_USAGE,
    warden,
  })
}

/** The upstream's completion with the failed choices replaced, and Warden's outcome. */
export function guardedCompletion(
  completion: Json & { choices: Json[] },
  replacements: ReadonlyMap<number, string>,
  warden: WardenOutcome,
  guarded: boolean,
): string {
  const relayed = relayedChoices(completion, 'message', guarded)
  const choices =
    replacements.size === 0
      ? relayed.choices
      : relayed.choices.map((choice) => {
          const text = replacements.get(choice.index as number)
          return text === undefined ? choice : replacedChoice(choice.index as number, text)
        })
  return JSON.stringify({ ...relayed, choices, warden })
}

const event = (data: string) => `data: ${data}\n\n`
const DONE = 'data: [DONE]\n\n'

/** One server-sent event of a stream, its data a chunk (or an error) as JSON. */
export const sseEvent = (data: Json): string => event(JSON.stringify(data))
/** The event that ends a stream. */
export const SSE_DONE = DONE

/** Where a reply's text goes in a chunk's delta. */
export type TextField = 'content' | 'refusal'

/**
 * A delta with its text (content and refusal) replaced by what is released, in `field` (and no
 * text field when nothing is); a delta without text gets `content` when something is released.
 */
export function withText(delta: Json, field: TextField | null, release: string): Json {
  if (field === null) return release === '' ? delta : { ...delta, content: release }
  const { content: _, refusal: __, ...rest } = delta
  return release === '' ? rest : { ...rest, [field]: release }
}

/** A delta with `pieces` as its tool calls (none: without tool_calls). */
export function withToolCalls(delta: Json, pieces: readonly Json[]): Json {
  const { tool_calls: _, ...rest } = delta
  return pieces.length === 0 ? rest : { ...rest, tool_calls: pieces }
}

/** Streamed calls as one delta's tool_calls, each whole: its index, id, type, name and all its arguments. */
export function wholeToolCalls(calls: ReadonlyMap<number, StreamedCall>): Json[] {
  return [...calls]
    .sort(([a], [b]) => a - b)
    .map(([index, call]) => ({
      index,
      ...(call.id !== undefined ? { id: call.id } : {}),
      type: call.type ?? 'function',
      function: { ...(call.name !== undefined ? { name: call.name } : {}), arguments: call.arguments },
    }))
}

/** A chunk of its own for text released between the upstream's chunks, under the stream's `envelope` (id, created, model). */
export function releasedChunk(envelope: Json, field: TextField, text: string): Json {
  return {
    ...envelope,
    choices: [{ index: 0, delta: { [field]: text }, logprobs: null, finish_reason: null }],
  }
}

/** A released stream's last chunk when it ends on a violation: the override, `content_filter`, and Warden's outcome. */
export function overriddenChunk(
  envelope: Json,
  overrideResponse: string | null,
  warden: WardenOutcome,
): Json {
  const text = replacementText(overrideResponse)
  return {
    ...envelope,
    choices: [
      {
        index: 0,
        delta: text === '' ? {} : { role: 'assistant', content: text },
        logprobs: null,
        finish_reason: 'content_filter',
      },
    ],
    warden,
  }
}

/** An error event, ending a stream whose headers have left (OpenAI's error format). */
export function errorEvent(code: string, message: string): string {
  return sseEvent({ error: { message, type: code, param: null, code } })
}

/** The chunks that say a replacement for one choice: its text, then finish_reason content_filter. */
function replacementChunks(
  shell: CompletionShell,
  index: number,
  text: string,
  includeUsage: boolean,
): OutgoingChunk[] {
  const base = { id: shell.id, object: 'chat.completion.chunk', created: shell.created, model: shell.model }
  const usage = includeUsage ? { usage: null } : {}
  return [
    {
      chunk: {
        ...base,
        choices: [
          { index, delta: { role: 'assistant', content: text }, logprobs: null, finish_reason: null },
        ],
        ...usage,
      },
    },
    {
      chunk: {
        ...base,
        choices: [{ index, delta: {}, logprobs: null, finish_reason: 'content_filter' }],
        ...usage,
      },
    },
  ]
}

/** A chunk to send: as received (`raw`), or made here. */
type OutgoingChunk = { raw?: string; chunk: Json }

/** Server-sent events from chunks, with Warden's outcome on the last one, ending with [DONE]. */
function eventStream(chunks: readonly OutgoingChunk[], warden: WardenOutcome): string {
  let text = ''
  const last = chunks.length - 1
  for (const [i, { raw, chunk }] of chunks.entries()) {
    if (i === last) text += event(JSON.stringify({ ...chunk, warden }))
    else text += event(raw ?? JSON.stringify(chunk))
  }
  return text + DONE
}

/** The stream sent when the input failed: each choice's replacement, then usage when asked. */
export function stoppedStream(
  shell: CompletionShell,
  n: number,
  text: string,
  includeUsage: boolean,
  warden: WardenOutcome,
): string {
  const chunks: OutgoingChunk[] = []
  for (let i = 0; i < n; i++) chunks.push(...replacementChunks(shell, i, text, includeUsage))
  if (includeUsage) {
    const { id, created, model } = shell
    chunks.push({
      chunk: { id, object: 'chat.completion.chunk', created, model, choices: [], usage: ZERO_USAGE },
    })
  }
  return eventStream(chunks, warden)
}

/** A chunk as relayed: as received when it holds only what Warden relays, else rebuilt without the rest. */
function relayedChunk(item: StreamChunk, guarded: boolean): OutgoingChunk {
  const chunk = relayedChoices(item.chunk as Json & { choices: Json[] }, 'delta', guarded)
  return chunk === item.chunk ? item : { chunk }
}

/**
 * The upstream's stream, replayed: as received when no choice failed (less what Warden does not
 * relay, `relayedChoices`); otherwise without a single delta of the failed choices, whose
 * replacements come after the other choices' chunks and before the usage chunk. `guarded`: an
 * enforced policy reads the reply.
 */
export function guardedStream(
  received: readonly StreamChunk[],
  replacements: ReadonlyMap<number, string>,
  includeUsage: boolean,
  warden: WardenOutcome,
  guarded: boolean,
): string {
  const chunks = received.map((item) => relayedChunk(item, guarded))
  if (replacements.size === 0) return eventStream(chunks, warden)
  const kept: OutgoingChunk[] = []
  const usage: OutgoingChunk[] = []
  for (const item of chunks) {
    const choices = item.chunk.choices as Json[]
    if (choices.length === 0) {
      // The usage chunk stays last; others without choices (Azure's prompt filter results) stay put.
      ;(item.chunk.usage ? usage : kept).push(item)
      continue
    }
    const left = choices.filter((c) => !replacements.has(c.index as number))
    if (left.length === choices.length) kept.push(item)
    else if (left.length > 0) kept.push({ chunk: { ...item.chunk, choices: left } })
  }
  const first = chunks[0]?.chunk ?? {}
  const shell: CompletionShell = {
    id: String(first.id ?? ''),
    created: typeof first.created === 'number' ? first.created : 0,
    model: String(first.model ?? ''),
  }
  for (const [index, text] of [...replacements].sort(([a], [b]) => a - b))
    kept.push(...replacementChunks(shell, index, text, includeUsage))
  return eventStream([...kept, ...usage], warden)
}

/**
 * What masking does to one choice's reply (docs/masking.md): an output mask rule's findings
 * replaced by `[KIND]` (its evaluation's plan, whose spans count in the reply as the evaluation
 * read it: message `index` of the evaluated conversation), then every placeholder the input was
 * masked with put back (`values`; JSON-escaped in tool-call arguments).
 */
export interface ReplyMasking {
  /** The output evaluation's plan, or null when no output mask rule found anything. */
  plan: MaskPlan | null
  /** The reply's index in the evaluated conversation (the spans' message). */
  index: number
  /** The input's placeholders to put back, and their values. */
  values: ReadonlyMap<string, string>
}

/** Whether masking can change a reply at all. */
export const masksReply = (m: ReplyMasking): boolean => m.plan !== null || m.values.size > 0

/** A reply's text and tool-call arguments as masking leaves them (`text` null: unchanged shape). */
export function maskedReply(reply: ReplyOfChoice, masking: ReplyMasking): ReplyOfChoice {
  let text = reply.text
  let calls = reply.toolCalls
  const { plan, index, values } = masking
  if (plan !== null) {
    const spans = plan.texts.filter((t) => t.source === 'messages' && t.index === index)
    if (spans.length > 0) {
      const [masked] = maskMessages(
        [{ role: 'assistant', content: text ?? '', tool_calls: calls }] as ChatMessage[],
        { ...plan, texts: spans.map((t) => ({ ...t, index: 0 })) },
        unnumbered(plan),
      )
      if (text !== null) text = (masked?.content as string) ?? text
      calls = (masked?.tool_calls as ToolCall[] | undefined) ?? calls
    }
  }
  if (values.size > 0) {
    if (text !== null) text = restoreText(text, values)
    calls = calls.map((call) => {
      if (typeof call.function?.arguments === 'string')
        return {
          ...call,
          function: { ...call.function, arguments: restoreText(call.function.arguments, values, true) },
        }
      if (typeof call.custom?.input === 'string')
        return { ...call, custom: { ...call.custom, input: restoreText(call.custom.input, values, true) } }
      return call
    })
  }
  return { text, toolCalls: calls }
}

/**
 * A completion's message with its reply replaced by what masking left (`maskedReply`): the text
 * in `content` (a refusal-only message keeps it a refusal), the tool calls' arguments in place.
 */
function rewrittenMessage(message: Json, original: ReplyOfChoice, masked: ReplyOfChoice): Json {
  const out: Json = { ...message }
  if (masked.text !== original.text && masked.text !== null) {
    if (typeof message.content === 'string' || Array.isArray(message.content)) {
      out.content = masked.text
      if (typeof message.refusal === 'string') out.refusal = null
    } else if (typeof message.refusal === 'string') out.refusal = masked.text
    else out.content = masked.text
  }
  if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0)
    out.tool_calls = (message.tool_calls as Json[]).map((call, i) => {
      const next = masked.toolCalls[i]
      return next
        ? {
            ...call,
            ...(next.function ? { function: next.function } : {}),
            ...(next.custom ? { custom: next.custom } : {}),
          }
        : call
    })
  else if (isObject(message.function_call) && masked.toolCalls[0]?.function)
    out.function_call = masked.toolCalls[0].function
  return out
}

/** A completion with each choice's reply masked (`maskings` by choice index; a choice without one as it is). */
export function maskedCompletion(
  completion: Json & { choices: Json[] },
  maskings: ReadonlyMap<number, ReplyMasking>,
): Json & { choices: Json[] } {
  if (maskings.size === 0) return completion
  const replies = completionReplies(completion)
  return {
    ...completion,
    choices: completion.choices.map((choice) => {
      const masking = maskings.get(choice.index as number)
      const reply = replies.get(choice.index as number)
      if (!masking || !reply || !masksReply(masking) || !isObject(choice.message)) return choice
      return { ...choice, message: rewrittenMessage(choice.message, reply, maskedReply(reply, masking)) }
    }),
  }
}

/**
 * A buffered stream's chunks with each choice's reply masked: a choice whose text or tool calls
 * masking changed gets them whole in its first delta that carried them (its text in the first
 * content or refusal delta, each call's arguments in its first piece), later deltas without them.
 */
export function maskedStream(
  chunks: readonly StreamChunk[],
  maskings: ReadonlyMap<number, ReplyMasking>,
): StreamChunk[] {
  if (maskings.size === 0) return [...chunks]
  const { replies } = streamReplies(chunks)
  const changed = new Map<number, { original: ReplyOfChoice; masked: ReplyOfChoice }>()
  for (const [index, masking] of maskings) {
    const original = replies.get(index)
    if (!original || !masksReply(masking)) continue
    const masked = maskedReply(original, masking)
    if (
      masked.text !== original.text ||
      JSON.stringify(masked.toolCalls) !== JSON.stringify(original.toolCalls)
    )
      changed.set(index, { original, masked })
  }
  if (changed.size === 0) return [...chunks]
  const textSent = new Set<number>()
  const callSent = new Set<string>()
  return chunks.map((item) => {
    const choices = item.chunk.choices as Json[]
    let touched = false
    const next = choices.map((choice) => {
      const change = changed.get(choice.index as number)
      if (!change || !isObject(choice.delta)) return choice
      touched = true
      const delta: Json = { ...choice.delta }
      const index = choice.index as number
      for (const field of ['content', 'refusal'] as const) {
        if (typeof delta[field] !== 'string') continue
        if (textSent.has(index)) delete delta[field]
        else {
          delta[field] = change.masked.text ?? ''
          textSent.add(index)
          // Content and refusal are one text: the first of them carries it.
          if (field === 'content' && typeof delta.refusal === 'string') delete delta.refusal
        }
      }
      const rewriteArgs = (piece: Json, call: number): Json => {
        const fn = isObject(piece.function) ? piece.function : null
        if (!fn || typeof fn.arguments !== 'string') return piece
        const key = `${index}:${call}`
        const whole = change.masked.toolCalls[call]?.function?.arguments
        if (callSent.has(key)) return { ...piece, function: { ...fn, arguments: '' } }
        callSent.add(key)
        return { ...piece, function: { ...fn, arguments: typeof whole === 'string' ? whole : fn.arguments } }
      }
      if (Array.isArray(delta.tool_calls))
        delta.tool_calls = (delta.tool_calls as Json[]).map((p) => rewriteArgs(p, p.index as number))
      if (isObject(delta.function_call))
        delta.function_call = rewriteArgs({ function: delta.function_call }, 0).function
      return { ...choice, delta }
    })
    return touched
      ? { raw: JSON.stringify({ ...item.chunk, choices: next }), chunk: { ...item.chunk, choices: next } }
      : item
  })
}

/**
 * LiteLLM's Generic Guardrail API mapped onto a Warden evaluation (docs/litellm.md). The contract
 * is LiteLLM's: docs/my-website/docs/adding_provider/generic_guardrail_api.md and
 * litellm/proxy/guardrails/guardrail_hooks/generic_guardrail_api/generic_guardrail_api.py in
 * BerriAI/litellm. Pure: what LiteLLM sent becomes a conversation, and an evaluation's answer
 * becomes LiteLLM's action.
 */
import { describeFailedRule, failedRules } from '../rules/failed-rules.js'
import type { Evaluation } from '../schemas/evaluations.js'
import type { GuardrailRequest, GuardrailResponse } from '../schemas/litellm.js'
import {
  CHAT_ROLES,
  type ChatMessage,
  type ChatRole,
  type ContentPart,
  type ToolCall,
} from '../schemas/messages.js'

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The part types of OpenAI's Responses API that hold text, as LiteLLM passes them on: read as `text` parts. */
const TEXT_PARTS: ReadonlySet<string> = new Set(['input_text', 'output_text'])

/** A part as Warden reads parts: a Responses API text part as a `text` part. */
function structuredPart(part: ContentPart): ContentPart {
  return TEXT_PARTS.has(part.type) && typeof part.text === 'string' ? { type: 'text', text: part.text } : part
}

/**
 * A tool call as Warden reads tool calls: arguments LiteLLM passes on as an object (parsed
 * already, as some providers give them) read as their JSON text, so that they are read at all.
 */
function structuredToolCall(call: Json): ToolCall {
  const fn = call.function
  if (!isObject(fn) || typeof fn.arguments === 'string' || fn.arguments == null) return call as ToolCall
  return { ...call, function: { ...fn, arguments: JSON.stringify(fn.arguments) } } as ToolCall
}

/**
 * One of LiteLLM's structured messages as Warden reads messages. LiteLLM passes on what its
 * caller sent, so nothing here is refused: an unknown role reads as `user` (read by the input
 * targets rather than by none), content of another shape as empty, parts without a type are
 * passed over. The Responses API's `input_text` and `output_text` parts read as text, and
 * tool-call arguments sent as an object as their JSON text.
 */
export function structuredMessage(raw: Json): ChatMessage {
  const role: ChatRole = (CHAT_ROLES as readonly unknown[]).includes(raw.role)
    ? (raw.role as ChatRole)
    : 'user'
  const message: ChatMessage = { role }
  const { content } = raw
  if (typeof content === 'string') message.content = content
  else if (Array.isArray(content))
    message.content = content
      .filter((part): part is ContentPart => isObject(part) && typeof part.type === 'string')
      .map(structuredPart)
  else message.content = null
  if (typeof raw.refusal === 'string') message.refusal = raw.refusal
  if (Array.isArray(raw.tool_calls))
    message.tool_calls = raw.tool_calls.filter(isObject).map(structuredToolCall)
  if (typeof raw.tool_call_id === 'string') message.tool_call_id = raw.tool_call_id
  if (typeof raw.name === 'string') message.name = raw.name
  return message
}

/**
 * The conversation a guardrail call asks about. A request: LiteLLM's structured messages when it
 * sends them, else each text as a user turn. A response: the structured messages (when sent), then
 * the reply as one assistant turn (its texts joined with "\n", its tool calls).
 */
export function guardrailConversation(request: GuardrailRequest): ChatMessage[] {
  const prior = (request.structured_messages ?? []).map(structuredMessage)
  const texts = request.texts ?? []
  if (request.input_type === 'request') {
    const messages: ChatMessage[] =
      prior.length > 0 ? prior : texts.map((text): ChatMessage => ({ role: 'user', content: text }))
    return messages.length > 0 ? messages : [{ role: 'user', content: '' }]
  }
  const reply: ChatMessage = { role: 'assistant', content: texts.join('\n') }
  if (request.tool_calls && request.tool_calls.length > 0) reply.tool_calls = request.tool_calls
  return [...prior, reply]
}

/**
 * LiteLLM's action for an evaluation's answer: allow is NONE; an override of a reply that has no
 * tool calls is GUARDRAIL_INTERVENED with the override_response in place of the reply's texts;
 * any other override, and a block, is BLOCKED (LiteLLM refuses the call with the reason: the
 * override_response, or which rules failed).
 */
export function guardrailAnswer(request: GuardrailRequest, evaluation: Evaluation): GuardrailResponse {
  if (evaluation.action === 'allow') return { action: 'NONE' }
  if (evaluation.action === 'mask') return maskedAnswer(request, evaluation)
  const override = evaluation.action === 'override' ? evaluation.override_response : null
  const hasToolCalls = (request.tool_calls?.length ?? 0) > 0
  if (override !== null && request.input_type === 'response' && !hasToolCalls) {
    const count = Math.max(1, request.texts?.length ?? 0)
    return { action: 'GUARDRAIL_INTERVENED', texts: [override, ...Array<string>(count - 1).fill('')] }
  }
  if (override !== null) return { action: 'BLOCKED', blocked_reason: override }
  const rules = failedRules(evaluation).map(describeFailedRule)
  const which = rules.length > 0 ? `: ${rules.join('; ')}` : ''
  return { action: 'BLOCKED', blocked_reason: `Blocked by Warden${which}; evaluation ${evaluation.id}` }
}

/**
 * Masking through LiteLLM (docs/litellm.md): GUARDRAIL_INTERVENED with each text LiteLLM sent
 * masked, one for one, which LiteLLM sends on in their place. Each masked value is replaced
 * wherever it stands in the texts (the texts are LiteLLM's extract of the messages Warden read):
 * in a request by its placeholder (`[EMAIL_1]`); in a response by `[KIND]`, since nothing can put
 * it back. What cannot be masked in a text blocks instead, never passing unmasked: a request with
 * no texts, or a reply whose tool calls hold a masked value (LiteLLM takes no modified tool calls).
 */
function maskedAnswer(request: GuardrailRequest, evaluation: Evaluation): GuardrailResponse {
  const placeholders = [...(evaluation.masked?.placeholders ?? [])].sort(
    (a, b) => b.text.length - a.text.length,
  )
  const texts = request.texts ?? []
  const replace = (text: string) => {
    let out = text
    for (const p of placeholders)
      out = out
        .split(p.text)
        .join(request.input_type === 'response' ? `[${p.kind.toUpperCase()}]` : p.placeholder)
    return out
  }
  const calls = JSON.stringify(request.tool_calls ?? [])
  const inCalls = placeholders.some(
    (p) => calls.includes(p.text) || calls.includes(JSON.stringify(p.text).slice(1, -1)),
  )
  if (texts.length === 0 || inCalls)
    return {
      action: 'BLOCKED',
      blocked_reason: `Blocked by Warden: values to mask where LiteLLM cannot take them masked (${texts.length === 0 ? 'no texts' : 'tool-call arguments'}); evaluation ${evaluation.id}`,
    }
  return { action: 'GUARDRAIL_INTERVENED', texts: texts.map(replace) }
}

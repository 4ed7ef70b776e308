import { type FieldError, invalid, pointerToken } from '../../errors.js'
import { type ConversationMessage, type NotRead, readableMessages } from '../../rules/conversation.js'
import type { ChatMessage } from '../../schemas/messages.js'

/**
 * What the schema cannot say without a noisy `anyOf`: a `text` part carries a string `text`, a
 * `refusal` part a string `refusal`. One error per part, at the field that is missing.
 */
export function partErrors(messages: readonly ChatMessage[], at: string): FieldError[] {
  const errors: FieldError[] = []
  messages.forEach((m, i) => {
    if (!Array.isArray(m.content)) return
    m.content.forEach((part, p) => {
      const field = part.type === 'text' ? 'text' : part.type === 'refusal' ? 'refusal' : null
      if (field === null || typeof part[field] === 'string') return
      const pointer = `${at}/${i}/content/${p}/${pointerToken(field)}`
      errors.push({
        pointer,
        detail: part[field] === undefined ? 'is required' : 'must be a string',
      })
    })
  })
  return errors
}

/**
 * Messages as sent (OpenAI's shape) as the services read them, or a 422 naming each malformed
 * part; `notRead` names what was passed over (non-text parts, audio, function_call).
 */
export function readBodyMessages(
  messages: readonly ChatMessage[],
  at = '/messages',
): { messages: ConversationMessage[]; notRead: NotRead[] } {
  const errors = partErrors(messages, at)
  if (errors.length > 0) throw invalid(errors)
  return readableMessages(messages)
}

/**
 * A policy test case's messages as stored: read like an evaluation's (non-text parts are not
 * kept), with the agent's fields (tool calls, tool_call_id, name) kept as sent.
 */
export function readTestCaseMessages(
  messages: readonly ChatMessage[],
  at = '/messages',
): ConversationMessage[] {
  return readBodyMessages(messages, at).messages
}

import { describe, expect, it } from 'vitest'
import { type ConversationInput, readConversation, type Target } from '../../../src/rules/conversation.js'

const conversation: ConversationInput = {
  messages: [
    { role: 'system', content: 'You are a support agent.' },
    { role: 'developer', content: [{ type: 'text', text: 'Be brief.' }] },
    { role: 'user', content: 'Hello' },
    { role: 'assistant', content: 'Hi, how can I help?' },
    { role: 'tool', content: '{"order": 42}' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Where is' },
        { type: 'text', text: 'my order?' },
      ],
    },
    { role: 'assistant', content: 'It ships tomorrow.' },
  ],
  context: ['Order 42 ships on Friday.', 'Shipping takes 2 days.'],
}

/** `[source, index]` of each text the targets name, in order. */
function named(input: ConversationInput, targets: Target[]) {
  return readConversation(input)
    .textsFor(targets)
    .map((t) => [t.source, t.index])
}

describe('reading a conversation', () => {
  it('joins content parts with a newline and reads developer as system', () => {
    const read = readConversation(conversation)
    expect(read.messages.map((m) => [m.role, m.text])).toEqual([
      ['system', 'You are a support agent.'],
      ['system', 'Be brief.'],
      ['user', 'Hello'],
      ['assistant', 'Hi, how can I help?'],
      ['tool', '{"order": 42}'],
      ['user', 'Where is\nmy order?'],
      ['assistant', 'It ships tomorrow.'],
    ])
    expect(read.context).toEqual([
      { source: 'context', index: 0, role: 'context', text: 'Order 42 ships on Friday.' },
      { source: 'context', index: 1, role: 'context', text: 'Shipping takes 2 days.' },
    ])
  })

  it('names every message of a role for system, user and assistant; tool messages for none', () => {
    expect(named(conversation, ['system'])).toEqual([
      ['messages', 0],
      ['messages', 1],
    ])
    expect(named(conversation, ['user'])).toEqual([
      ['messages', 2],
      ['messages', 5],
    ])
    expect(named(conversation, ['assistant'])).toEqual([
      ['messages', 3],
      ['messages', 6],
    ])
    expect(
      named(conversation, ['input', 'output', 'user', 'assistant', 'system', 'context']),
    ).not.toContainEqual(['messages', 4])
  })

  it('names the last user message as input and a final assistant message as output', () => {
    expect(named(conversation, ['input'])).toEqual([['messages', 5]])
    expect(named(conversation, ['output'])).toEqual([['messages', 6]])
    const read = readConversation(conversation)
    expect(read.input?.text).toBe('Where is\nmy order?')
    expect(read.output?.text).toBe('It ships tomorrow.')
  })

  it('has no output when the conversation ends with another role', () => {
    const beforeReply = { messages: conversation.messages.slice(0, 6), context: null }
    expect(named(beforeReply, ['output'])).toEqual([])
    expect(readConversation(beforeReply).output).toBeNull()
    expect(named(beforeReply, ['input'])).toEqual([['messages', 5]])
    const afterTool = { messages: conversation.messages.slice(0, 5), context: null }
    expect(named(afterTool, ['output'])).toEqual([])
    expect(named(afterTool, ['input'])).toEqual([['messages', 2]])
  })

  it('has no input without a user message', () => {
    const read = readConversation({ messages: [{ role: 'system', content: 'x' }], context: null })
    expect(read.input).toBeNull()
    expect(read.textsFor(['input', 'output', 'context'])).toEqual([])
  })

  it('names each context document, after the messages', () => {
    expect(named(conversation, ['context', 'output'])).toEqual([
      ['messages', 6],
      ['context', 0],
      ['context', 1],
    ])
    expect(named({ messages: conversation.messages, context: [] }, ['context'])).toEqual([])
    expect(named({ messages: conversation.messages, context: null }, ['context'])).toEqual([])
  })

  it('names a text once when several targets name it, in conversation order', () => {
    expect(named(conversation, ['output', 'input', 'user'])).toEqual([
      ['messages', 2],
      ['messages', 5],
      ['messages', 6],
    ])
    expect(named(conversation, ['assistant', 'output'])).toEqual([
      ['messages', 3],
      ['messages', 6],
    ])
  })

  it('gives the same texts for the same targets in any order, computed once', () => {
    const read = readConversation(conversation)
    const first = read.textsFor(['input', 'context'])
    expect(read.textsFor(['context', 'input'])).toBe(first)
    expect(read.textsFor(['input'])).not.toBe(first)
  })

  it('keeps an empty message as an empty text', () => {
    const read = readConversation({ messages: [{ role: 'user', content: [] }], context: null })
    expect(read.textsFor(['input'])).toEqual([{ source: 'messages', index: 0, role: 'user', text: '' }])
  })
})

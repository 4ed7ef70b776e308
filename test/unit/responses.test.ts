import { describe, expect, it } from 'vitest'
import {
  maskedRequest,
  maskedResponse,
  readResponsesInput,
  responseEvents,
  responseReply,
} from '../../src/proxy/responses.js'

/** OpenAI's Responses API as Warden reads and writes it (src/proxy/responses.ts). */
describe('a Responses request read as a conversation', () => {
  const request = {
    instructions: 'Be brief.',
    input: [
      { role: 'developer', content: 'Never refund more than 100.' },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Refund 1042, mail jane@example.com' },
          { type: 'input_image', image_url: 'https://x/y.png' },
        ],
      },
      { type: 'reasoning', id: 'rs_1', summary: [] },
      { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"order":1042}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'Paid: 80' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Refunding.' }] },
    ],
  }

  it('reads instructions and system, user, assistant, calls and tool outputs; names what it does not read', () => {
    const read = readResponsesInput(request)
    expect(read.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'developer', content: 'Never refund more than 100.' },
      {
        role: 'user',
        content: [{ type: 'text', text: 'Refund 1042, mail jane@example.com' }, { type: 'input_image' }],
      },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"order":1042}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'Paid: 80' },
      { role: 'assistant', content: [{ type: 'text', text: 'Refunding.' }] },
    ])
    expect(read.notRead).toEqual([
      { item: 1, part: 1, type: 'input_image' },
      { item: 2, part: null, type: 'reasoning' },
    ])
    expect(readResponsesInput({ input: 'Hello' }).messages).toEqual([{ role: 'user', content: 'Hello' }])
  })

  it('writes a masked conversation back into the items, everything else as sent', () => {
    const read = readResponsesInput(request)
    const masked = read.messages.map((m) =>
      m.role === 'user'
        ? { ...m, content: [{ type: 'text', text: 'Refund 1042, mail [EMAIL_1]' }, { type: 'input_image' }] }
        : m,
    )
    const body = maskedRequest({ ...request, model: 'm' }, read, masked)
    expect((body.input as any[])[1].content).toEqual([
      { type: 'input_text', text: 'Refund 1042, mail [EMAIL_1]' },
      { type: 'input_image', image_url: 'https://x/y.png' },
    ])
    expect((body.input as any[])[2]).toEqual(request.input[2])
    expect(body.instructions).toBe('Be brief.')
  })
})

describe('a response read and rewritten', () => {
  const response = {
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    output: [
      { type: 'reasoning', id: 'rs_1', summary: [] },
      {
        type: 'message',
        id: 'msg_1',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Mail sent to [EMAIL_1].', annotations: [] }],
      },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'send', arguments: '{"to":"[EMAIL_1]"}' },
    ],
  }

  it('reads its output text and function calls', () => {
    expect(responseReply(response)).toEqual({
      text: 'Mail sent to [EMAIL_1].',
      toolCalls: [
        { id: 'call_1', type: 'function', function: { name: 'send', arguments: '{"to":"[EMAIL_1]"}' } },
      ],
    })
  })

  it('puts the masked values back, JSON-escaped in arguments', () => {
    const values = new Map([['[EMAIL_1]', 'jane"@example.com']])
    const out = maskedResponse(response, { plan: null, index: 1, values }) as any
    expect(out.output[1].content[0].text).toBe('Mail sent to jane"@example.com.')
    expect(out.output[2].arguments).toBe('{"to":"jane\\"@example.com"}')
    expect(out.output[0]).toEqual(response.output[0])
  })

  it('spells a response as OpenAI’s events, numbered, ending with its terminal event', () => {
    const events = responseEvents({ ...response, status: 'incomplete' })
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.incomplete',
    ])
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    expect(events[0]).toMatchObject({ response: { status: 'in_progress', output: [] } })
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'
import { completion, startUpstreamDouble, type UpstreamDouble } from '../helpers/upstream-double.js'

/** The tools rule (CONTRACT section 4): the tool names the model may call, read in assistant and output turns. */

const call = (id: string, name: string, args = '{}') => ({
  id,
  type: 'function',
  function: { name, arguments: args },
})

const callingReply = (...names: string[]) =>
  completion('', {
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: names.map((name, i) => call(`call_${i}`, name, '{"order": 1042}')),
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ],
  })

describe.each(STORE_KINDS)('the tools rule (%s)', (kind) => {
  let t: TestApp
  let double: UpstreamDouble

  beforeAll(async () => {
    double = await startUpstreamDouble()
    t = await createTestApp(kind, { PROVIDER_DOUBLE_BASE_URL: double.baseUrl })
    const create = async (url: string, payload: object) => {
      const res = await t.request({ method: 'POST', url, payload })
      expect(res.statusCode, res.body).toBe(201)
      return res.json()
    }
    await create('/v1/applications', {
      id: 'agent',
      name: 'Agent',
      description: '',
      provider: 'double',
      model: 'm',
    })
    const policy = await create('/v1/applications/agent/policies', {
      id: 'allowed-tools',
      rules: [{ type: 'tools', flagged: ['lookup_*', 'get_order'] }],
      target: ['assistant', 'output'],
      override_response: 'That tool is not available.',
    })
    expect(policy.rules[0]).toMatchObject({
      type: 'tools',
      flagged: ['lookup_*', 'get_order'],
      expected: 'pass',
    })
  })

  afterAll(async () => {
    await t?.close()
    await double?.close()
  })

  it('needs the list of tools', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications/agent/policies',
      payload: { id: 'no-list', rules: [{ type: 'tools' }], target: ['output'] },
    })
    const body = problem(res, 422, 'validation_error')
    expect(body.errors).toEqual([
      { pointer: '/rules/0/flagged', detail: expect.stringContaining('tool names') },
    ])
  })

  it('fails an evaluation whose assistant calls a tool not listed, naming the call', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications/agent/evaluations',
      payload: {
        messages: [
          { role: 'user', content: 'Refund order 1042.' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [call('c1', 'lookup_order'), call('c2', 'refund_order')],
          },
        ],
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({
      verdict: 'fail',
      action: 'override',
      override_response: 'That tool is not available.',
    })
    expect(body.policies[0].rules[0]).toMatchObject({
      type: 'tools',
      status: 'fail',
      reason: 'calls a tool not listed: refund_order',
      findings: [
        { kind: 'tool', source: 'messages', index: 1, tool_call: 1, path: '#name', text: 'refund_order' },
      ],
    })
  })

  it('passes listed calls and wildcard matches', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications/agent/evaluations',
      payload: {
        messages: [
          { role: 'user', content: 'Where is order 1042?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [call('c1', 'lookup_order'), call('c2', 'get_order')],
          },
        ],
      },
    })
    expect(res.json()).toMatchObject({ verdict: 'pass', action: 'allow' })
  })

  it('replaces a guarded completion that calls a tool not listed', async () => {
    double.script({ json: callingReply('refund_order') })
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications/agent/chat/completions',
      payload: { messages: [{ role: 'user', content: 'Refund order 1042.' }], tools: [] },
    })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(res.headers['x-warden-action']).toBe('override')
    expect(body.choices[0]).toMatchObject({
      finish_reason: 'content_filter',
      message: { role: 'assistant', content: 'That tool is not available.' },
    })
    expect(body.choices[0].message.tool_calls ?? []).toEqual([])
    expect(body.warden.failed).toEqual([
      expect.objectContaining({
        policy_id: 'allowed-tools',
        rule_index: 0,
        rule_type: 'tools',
        categories: ['tool'],
      }),
    ])
    double.script({ json: callingReply('lookup_order') })
    const allowed = await t.request({
      method: 'POST',
      url: '/v1/applications/agent/chat/completions',
      payload: { messages: [{ role: 'user', content: 'Where is order 1042?' }] },
    })
    expect(allowed.json().choices[0].message.tool_calls[0].function.name).toBe('lookup_order')
  })
})

import { describe, expect, it } from 'vitest'
import { shippedClassifiers } from '../../../src/models/shipped.js'
import type { ConversationInput, Target } from '../../../src/rules/conversation.js'
import { compilePolicy, evaluate } from '../../../src/rules/evaluate.js'
import { toolAllowList, toolPattern } from '../../../src/rules/rule-types/tools.js'
import { streamPlan } from '../../../src/rules/stream.js'
import { checkRules, normalizeRule } from '../../../src/rules/validation.js'
import type { PolicyRuleInput } from '../../../src/schemas/policies.js'

function policy(rules: PolicyRuleInput[], target: Target[] = ['assistant', 'output']) {
  return compilePolicy(
    {
      id: 'tools',
      revision: 1,
      draft: false,
      target,
      definition: null,
      override_response: 'Not allowed.',
      mode: 'enforce',
      on_error: 'fail_closed',
      rules: rules.map(normalizeRule),
    },
    shippedClassifiers(),
  )
}

const call = (id: string, name: string, args: string) => ({
  id,
  type: 'function' as const,
  function: { name, arguments: args },
})

const agentTurn: ConversationInput = {
  messages: [
    { role: 'user', content: 'Find my order and refund it.' },
    { role: 'assistant', content: '', tool_calls: [call('c1', 'search_orders', '{"q":"42"}')] },
    { role: 'tool', tool_call_id: 'c1', content: 'order 42: shipped' },
    {
      role: 'assistant',
      content: 'Refunding now.',
      tool_calls: [call('c2', 'get_order', '{"id":42}'), call('c3', 'refund_order', '{"id":42}')],
    },
  ],
  context: null,
}

describe('tool name patterns', () => {
  it('matches names exactly, and * as any run of characters', () => {
    expect(toolPattern('search')('search')).toBe(true)
    expect(toolPattern('search')('search_web')).toBe(false)
    expect(toolPattern('search_*')('search_')).toBe(true)
    expect(toolPattern('search_*')('search_web')).toBe(true)
    expect(toolPattern('search_*')('research_web')).toBe(false)
    expect(toolPattern('*_order')('get_order')).toBe(true)
    expect(toolPattern('*_order')('get_orders')).toBe(false)
    expect(toolPattern('a*b*c')('abc')).toBe(true)
    expect(toolPattern('a*b*c')('axxbyyc')).toBe(true)
    expect(toolPattern('a*b*c')('axxcyyb')).toBe(false)
    expect(toolPattern('ab*ba')('aba')).toBe(false)
    expect(toolPattern('*')('anything')).toBe(true)
    expect(toolPattern('Search')('search')).toBe(false)
  })

  it('allows a name any pattern of the list allows', () => {
    const allowed = toolAllowList(['get_order', 'search_*'])
    expect(['get_order', 'search_orders', 'refund_order'].map(allowed)).toEqual([true, true, false])
  })
})

describe('the tools rule', () => {
  it('needs the list of tools', () => {
    const errors = checkRules([normalizeRule({ type: 'tools' })], null, '', 'skip')
    expect(errors).toEqual([{ pointer: '/rules/0/flagged', detail: expect.stringContaining('tool names') }])
    expect(checkRules([normalizeRule({ type: 'tools', flagged: ['search_*'] })], null, '', 'skip')).toEqual(
      [],
    )
  })

  it('fails on a call to a tool not listed, with a finding naming the call', async () => {
    const outcome = await evaluate(
      [policy([{ type: 'tools', flagged: ['search_*', 'get_order'] }])],
      agentTurn,
      {
        judge: null,
      },
    )
    const rule = outcome.policies[0]?.rules[0]
    expect(rule?.status).toBe('fail')
    expect(rule?.reason).toBe('calls a tool not listed: refund_order')
    expect(rule?.findings).toEqual([
      {
        kind: 'tool',
        source: 'messages',
        index: 3,
        tool_call: 1,
        path: '#name',
        start: 0,
        end: 12,
        text: 'refund_order',
      },
    ])
    expect(outcome.verdict).toBe('fail')
    expect(outcome.action).toBe('override')
  })

  it('passes when every call names a listed tool, and reads no message text', async () => {
    const outcome = await evaluate(
      [policy([{ type: 'tools', flagged: ['search_*', '*_order'] }])],
      agentTurn,
      { judge: null },
    )
    expect(outcome.policies[0]?.rules[0]?.status).toBe('pass')
    const noCalls: ConversationInput = {
      messages: [
        { role: 'user', content: 'refund_order please' },
        { role: 'assistant', content: 'I will call refund_order.' },
      ],
      context: null,
    }
    const plain = await evaluate([policy([{ type: 'tools', flagged: ['search'] }])], noCalls, { judge: null })
    expect(plain.policies[0]?.rules[0]?.status).toBe('pass')
  })

  it('reads only the output turn under the output target', async () => {
    const outcome = await evaluate(
      [policy([{ type: 'tools', flagged: ['get_order', 'refund_order'] }], ['output'])],
      agentTurn,
      { judge: null },
    )
    // search_orders, in an earlier turn, is not the output's.
    expect(outcome.policies[0]?.rules[0]?.status).toBe('pass')
  })

  it('is skipped when its targets select no text', async () => {
    const asked: ConversationInput = { messages: [{ role: 'user', content: 'hi' }], context: null }
    const outcome = await evaluate([policy([{ type: 'tools', flagged: ['search'] }])], asked, { judge: null })
    expect(outcome.policies[0]?.rules[0]?.status).toBe('skipped')
  })

  it('holds no text of a streamed reply back', () => {
    const plan = streamPlan([policy([{ type: 'tools', flagged: ['search'] }])])
    expect(plan.mode).toBe('incremental')
    if (plan.mode !== 'incremental') return
    expect(plan.detectors).toHaveLength(1)
    const detector = plan.detectors[0]
    expect(detector?.pending('I will search_orders now', 0)).toBe(24)
    expect(
      detector?.match({ source: 'messages', index: 0, role: 'assistant', text: 'refund_order' }),
    ).toEqual([])
  })
})

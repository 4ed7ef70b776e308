import { Type } from '@sinclair/typebox'
import { Ajv } from 'ajv'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ArrayLimitScan, type Shape, shapeOf } from '../../src/http/array-limits.js'
import { ChatCompletionRequestSchema } from '../../src/schemas/chat-completions.js'
import { EvaluationRequestSchema } from '../../src/schemas/evaluations.js'

/** The scan's answer for `body` sent in chunks of `size` bytes. */
function scan(shape: Shape, body: string, size = 65_536) {
  const bytes = Buffer.from(body)
  const reader = new ArrayLimitScan(shape)
  for (let at = 0; at < bytes.length; at += size) {
    const error = reader.write(bytes.subarray(at, at + size))
    if (error) return { ...error, at }
  }
  return null
}

const evaluation = shapeOf(EvaluationRequestSchema) as Shape
const parts = (n: number) => Array.from({ length: n }, () => ({ type: 'text', text: 'a' }))

describe('array limits read as the body arrives', () => {
  it('reads the limits of the evaluation schema', () => {
    expect(evaluation.properties?.get('messages')?.maxItems).toBe(1000)
    expect(evaluation.properties?.get('messages')?.items?.properties?.get('content')?.maxItems).toBe(10_000)
    // A nullable list keeps its limit: the null branch is no container.
    expect(evaluation.properties?.get('draft_policies')?.maxItems).toBe(20)
    expect(shapeOf(Type.Object({ name: Type.String() }))).toBeNull()
  })

  it('refuses a message of 10,001 parts at that message, as the schema words it, before reading the rest', () => {
    const body = JSON.stringify({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: parts(10_001) },
      ],
      draft_policies: [{ id: 'p', rules: [{ type: 'length', value: '10' }], target: ['input'] }],
    })
    const error = scan(evaluation, body, 1024)
    expect(error).toMatchObject({ pointer: '/messages/1/content', detail: 'must have at most 10000 items' })
    expect(error?.at).toBeLessThan(body.indexOf('"draft_policies"'))
    expect(
      scan(evaluation, JSON.stringify({ messages: [{ role: 'user', content: parts(10_000) }] })),
    ).toBeNull()
  })

  it('is not misled by brackets, quotes and escapes inside strings, nor by chunk edges', () => {
    const tricky = 'a ] } [ { , " \\" \\\\ \\u005d "'
    const body = JSON.stringify({
      [`mess${'ages'}`]: [
        { role: 'user', content: tricky, name: '"]' },
        { role: 'user', content: [{ type: 'text', text: tricky, extra: [[[tricky]]] }] },
      ],
      context: { documents: [tricky] },
    })
    for (const size of [1, 2, 3, 7, 64]) expect(scan(evaluation, body, size)).toBeNull()
    const over = JSON.stringify({
      'mess\u0061ges': Array.from({ length: 1001 }, () => ({ role: 'user', content: tricky })),
    }).replace('"messages"', '"mess\\u0061ges"')
    for (const size of [1, 5, 4096])
      expect(scan(evaluation, over, size)).toMatchObject({
        pointer: '/messages',
        detail: 'must have at most 1000 items',
      })
  })

  it('follows the arrays of a draft policy, and skips what the schema passes on as sent', () => {
    const rules = Array.from({ length: 65 }, () => ({ type: 'length', value: '1' }))
    const body = JSON.stringify({
      messages: [{ role: 'user', content: 'hi' }],
      draft_policies: [
        { id: 'ok', rules: [], target: ['input'] },
        { id: 'big', rules, target: ['input'] },
      ],
    })
    expect(scan(evaluation, body)).toMatchObject({ pointer: '/draft_policies/1/rules' })
    const chat = shapeOf(ChatCompletionRequestSchema) as Shape
    const passed = JSON.stringify({
      messages: [{ role: 'user', content: 'hi' }],
      tools: Array.from({ length: 20_000 }, () => ({ type: 'function', function: { name: 'f' } })),
    })
    expect(scan(chat, passed)).toBeNull()
  })

  it('keeps reading past a key too long to be a field', () => {
    const body = `{"${'k'.repeat(10_000)}": [1, 2], "messages": ${JSON.stringify(
      Array.from({ length: 1001 }, () => ({ role: 'user', content: 'a' })),
    )}}`
    expect(scan(evaluation, body, 3000)).toMatchObject({ pointer: '/messages' })
  })

  it('stops looking at what is not JSON, and leaves it to the parser', () => {
    expect(scan(evaluation, `{"messages": ]${'[1,'.repeat(2000)}`)).toBeNull()
    expect(scan(evaluation, `"text"`)).toBeNull()
    expect(scan(evaluation, `{} {"messages": [${'1,'.repeat(1500)}1]}`)).toBeNull()
  })

  it('never refuses a body the schema accepts, and finds an array over its limit when there is one', () => {
    const Leaf = Type.Array(Type.Unknown(), { maxItems: 2 })
    const schema = Type.Object(
      {
        a: Leaf,
        b: Type.Array(Type.Object({ c: Type.Optional(Leaf) }, { additionalProperties: true }), {
          maxItems: 3,
        }),
        d: Type.Optional(Type.Union([Leaf, Type.Null()])),
      },
      { additionalProperties: true },
    )
    const shape = shapeOf(schema) as Shape
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema)
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom(null, 1, 'x', '"]\\', true),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd', 'e\\"'), tie('value'), { maxKeys: 4 }),
      ),
    })).value
    const body = fc.record({
      a: fc.array(json, { maxLength: 3 }),
      b: fc.array(fc.dictionary(fc.constantFrom('c', 'x'), fc.array(json, { maxLength: 3 })), {
        maxLength: 4,
      }),
      d: fc.oneof(fc.constant(null), fc.array(json, { maxLength: 3 })),
    })
    fc.assert(
      fc.property(body, fc.integer({ min: 1, max: 16 }), (value, size) => {
        validate(value)
        const overLimit = (validate.errors ?? []).filter((e) => e.keyword === 'maxItems')
        const error = scan(shape, JSON.stringify(value, null, size % 3 === 0 ? 1 : undefined), size)
        if (error === null) expect(overLimit).toEqual([])
        else expect(overLimit.map((e) => e.instancePath)).toContain(error.pointer)
      }),
      { numRuns: 500 },
    )
  })
})

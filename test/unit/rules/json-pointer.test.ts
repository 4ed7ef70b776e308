import { describe, expect, it } from 'vitest'
import { lengthMatcher, piiMatcher, redactText } from '../../../src/rules/detectors/index.js'
import { jsonPointerAt } from '../../../src/rules/json-pointer.js'
import type { TargetText } from '../../../src/rules/types.js'

/** The pointer at the first occurrence of `needle` in `text`. */
const at = (text: string, needle: string) => jsonPointerAt(text, text.indexOf(needle))

describe('the JSON Pointer at an offset', () => {
  const args = '{"order": 1042, "card": {"number": "4111 1111"}, "notes": ["a", "call 555"], "a/b~": "x"}'

  it('names the innermost value holding the offset', () => {
    expect(at(args, '4111')).toBe('/card/number')
    expect(at(args, '1042')).toBe('/order')
    expect(at(args, '555')).toBe('/notes/1')
    expect(at(args, '"x"')).toBe('/a~1b~0')
  })

  it('names a member by its name, and the container between values', () => {
    expect(at(args, 'number')).toBe('/card/number')
    expect(at(args, ', "card"')).toBe('')
    expect(at(args, ', "call')).toBe('/notes')
  })

  it('locates as far as a text still being written goes', () => {
    expect(at('{"card": {"number": "4111 11', '4111')).toBe('/card/number')
    expect(at('[1, [2, "abc', 'abc')).toBe('/1/1')
  })

  it('answers "" for a text that is not JSON, and for nesting too deep to follow', () => {
    expect(at('card 4111 1111', '4111')).toBe('')
    expect(at('{"a": 1 "b": 2}', '2')).toBe('')
    const deep = `${'['.repeat(10_000)}"x"${']'.repeat(10_000)}`
    expect(at(deep, 'x')).toBe('')
  })
})

describe('findings in a tool call’s arguments', () => {
  const args = '{"order": 1042, "card": "4111 1111 1111 1111"}'
  const target: TargetText = {
    source: 'messages',
    index: 3,
    role: 'assistant',
    kind: 'arguments',
    tool_call: 1,
    text: args,
  }

  it('name the call and the argument, with offsets in the arguments', () => {
    expect(piiMatcher(['credit_card'])(target)).toEqual([
      {
        kind: 'credit_card',
        source: 'messages',
        index: 3,
        tool_call: 1,
        path: '/card',
        start: args.indexOf('4111'),
        end: args.indexOf('4111') + 19,
        text: '4111 1111 1111 1111',
      },
    ])
    expect(lengthMatcher(10)(target)).toEqual([
      {
        kind: 'length',
        source: 'messages',
        index: 3,
        tool_call: 1,
        path: '',
        start: 0,
        end: args.length,
        text: null,
      },
    ])
  })

  it('are passed over when the message’s content is redacted', () => {
    const [finding] = piiMatcher(['credit_card'])(target)
    expect(redactText('Refunding now.', finding ? [finding] : [])).toBe('Refunding now.')
  })

  it('carry no tool_call or path in a message’s content', () => {
    const [finding] = piiMatcher(['credit_card'])({ ...target, kind: 'message', tool_call: undefined })
    expect(finding).not.toHaveProperty('tool_call')
    expect(finding).not.toHaveProperty('path')
  })
})

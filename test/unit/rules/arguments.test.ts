import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  type DecodedArguments,
  decodeArguments,
  MAX_POINTER_DEPTH,
  NAME_PATH,
  readToolCall,
} from '../../../src/rules/arguments.js'
import { type ConversationInput, readConversation } from '../../../src/rules/conversation.js'
import {
  keywordsMatcher,
  lengthMatcher,
  piiMatcher,
  regexMatcher,
  toxicityHeuristic,
} from '../../../src/rules/detectors/index.js'
import type { Finding, TargetText } from '../../../src/rules/types.js'
import type { ToolCall } from '../../../src/schemas/messages.js'
import { cpSlice } from './detector-helpers.js'

/** The tool call's text as a conversation reads it: the assistant turn's only call. */
function callText(call: ToolCall): TargetText {
  const input: ConversationInput = {
    messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', tool_calls: [call] },
    ],
    context: null,
  }
  const text = readConversation(input).toolCalls[0]
  if (text === undefined) throw new Error('the call reads no text')
  return text
}
const fn = (args: string, name = 'refund'): ToolCall => ({
  id: 'call_1',
  type: 'function',
  function: { name, arguments: args },
})
const cards = piiMatcher(['credit_card'])
/** The JSON Pointer of each line of decoded arguments. */
const pointers = (decoded: DecodedArguments | null) =>
  decoded === null ? null : Array.from(decoded.lineAt, (_, k) => decoded.linePointer(k))
const pii = piiMatcher(null)

/** Each finding's text is its code point slice of what it counts in: the arguments, or the name. */
function expectSlices(findings: readonly Finding[], call: { name: string; args: string }) {
  for (const f of findings) {
    const source = f.path === NAME_PATH ? call.name : call.args
    expect(cpSlice(source, f.start, f.end)).toBe(f.text)
  }
}

describe('decoding tool-call arguments', () => {
  it('reads values one a line, members as key: value, containers’ members on the lines after their key', () => {
    const raw =
      '{"order": 1042, "payment": {"card": "x"}, "tags": ["a", "b"], "ok": true, "none": {}, "n": null}'
    const decoded = decodeArguments(raw)
    expect(decoded?.text).toBe('order: 1042\npayment:\ncard: x\ntags:\na\nb\nok: true\nnone:\nn: null')
    expect(pointers(decoded)).toEqual([
      '/order',
      '/payment',
      '/payment/card',
      '/tags',
      '/tags/0',
      '/tags/1',
      '/ok',
      '/none',
      '/n',
    ])
    expect(decodeArguments('"just a string"')?.text).toBe('just a string')
    expect(pointers(decodeArguments('[[1, 2], [], [[3]]]'))).toEqual(['/0/0', '/0/1', '/2/0/0'])
    expect(decodeArguments('{}')?.text).toBe('')
  })

  it('decodes escapes, each unit remembering the escape it came from', () => {
    const raw = '{"card": "\\u0034111\\t\\"\\/"}'
    const decoded = decodeArguments(raw)
    expect(decoded?.text).toBe('card: 4111\t"/')
    const value = (decoded?.text ?? '').indexOf('4')
    // \u0034 is six units of the arguments, 1 one, \t two.
    expect([decoded?.from(value), decoded?.to(value)]).toEqual([
      raw.indexOf('\\u0034'),
      raw.indexOf('\\u0034') + 6,
    ])
    expect([decoded?.from(value + 1), decoded?.to(value + 1)]).toEqual([
      raw.indexOf('111'),
      raw.indexOf('111') + 1,
    ])
    expect([decoded?.from(value + 4), decoded?.to(value + 4)]).toEqual([
      raw.indexOf('\\t'),
      raw.indexOf('\\t') + 2,
    ])
    // The name reads as written; `: ` stands for nothing of the arguments: empty, after the name.
    expect([decoded?.from(0), decoded?.to(3)]).toEqual([2, 6])
    expect([decoded?.from(4), decoded?.to(4), decoded?.from(5), decoded?.to(5)]).toEqual([6, 6, 6, 6])
  })

  it('decodes an escaped surrogate pair into the character, and counts code points in the arguments as sent', () => {
    const raw = '{"note": "\\ud83d\\ude00 😀 4111 1111 1111 1111"}'
    expect(decodeArguments(raw)?.text).toBe('note: 😀 😀 4111 1111 1111 1111')
    const [finding] = cards(callText(fn(raw)))
    // 12 ASCII units for the escaped pair, one code point for the literal emoji.
    const start = raw.indexOf('4111') - 1
    expect(finding).toMatchObject({ start, end: start + 19, text: '4111 1111 1111 1111', path: '/note' })
    expectSlices([finding as Finding], { name: 'refund', args: raw })
  })

  it('escapes ~ and / in the pointer of a member name (RFC 6901: ~0, ~1)', () => {
    const raw = '{"a/b": {"m~n": ["alice@example.com"]}}'
    expect(pii(callText(fn(raw)))).toMatchObject([{ kind: 'email', path: '/a~1b/m~0n/0' }])
  })

  it('reads member names: a finding in one names its member', () => {
    const raw = '{"alice\\u0040example.com": "owner"}'
    const [finding] = pii(callText(fn(raw)))
    expect(finding).toMatchObject({
      kind: 'email',
      path: '/alice@example.com',
      text: 'alice\\u0040example.com',
    })
    expect(finding?.start).toBe(2)
  })

  it('reads numbers as written: a card number written as a JSON number', () => {
    const raw = '{"order": 1042, "card": 4111111111111111}'
    expect(cards(callText(fn(raw)))).toEqual([
      {
        kind: 'credit_card',
        source: 'messages',
        index: 1,
        tool_call: 0,
        path: '/card',
        start: raw.indexOf('4111'),
        end: raw.indexOf('4111') + 16,
        text: '4111111111111111',
      },
    ])
  })

  it('reads arguments that are not valid JSON as sent', () => {
    expect(decodeArguments('{"card": "4111')).toBeNull()
    expect(decodeArguments('{"a": 1,}')).toBeNull()
    expect(decodeArguments('card 4111')).toBeNull()
    const truncated = '{"card": "4111 1111 1111 1111'
    expect(callText(fn(truncated)).text).toBe(`refund\n${truncated}`)
    expect(cards(callText(fn(truncated)))).toMatchObject([
      { start: 10, end: 29, text: '4111 1111 1111 1111', path: '/card' },
    ])
    // Not JSON at all: escapes are text as any other, and the path is "".
    const prose = 'pay with \\u0034111 1111 1111 1111 or 4111 1111 1111 1111'
    expect(cards(callText(fn(prose)))).toMatchObject([{ text: '4111 1111 1111 1111', path: '' }])
  })

  it('reads arguments nested deeper than any stack, locating values past 256 levels at their ancestor there', () => {
    const raw = `${'['.repeat(20_000)}"\\u0034111 1111 1111 1111"${']'.repeat(20_000)}`
    const [finding] = cards(callText(fn(raw)))
    expect(finding?.start).toBe(20_001)
    expect(finding?.path).toBe('/0'.repeat(MAX_POINTER_DEPTH))
    // A value at every level: each is read, each pointer as deep as it is, up to the cap.
    const levels = 5_000
    const every = `${'[1,'.repeat(levels)}1${']'.repeat(levels)}`
    const decoded = decodeArguments(every)
    expect(decoded?.lineAt).toHaveLength(levels + 1)
    expect(decoded?.linePointer(0)).toBe('/0')
    expect(decoded?.linePointer(2)).toBe('/1/1/0')
    expect(decoded?.linePointer(levels)).toBe('/1'.repeat(MAX_POINTER_DEPTH))
  })
})

describe('findings in a tool call', () => {
  it('find what the client’s JSON.parse reads: escaped digits, spaces and @', () => {
    for (const [raw, kind, value] of [
      ['{"card": "\\u0034111 1111 1111 1111"}', 'credit_card', '\\u0034111 1111 1111 1111'],
      ['{"card": "4111\\u00201111 1111 1111"}', 'credit_card', '4111\\u00201111 1111 1111'],
      ['{"to": "alice\\u0040example.com"}', 'email', 'alice\\u0040example.com'],
      [
        '{"card": "４１１１ １１１１ １１１１ １１１１"}',
        'credit_card',
        '４１１１ １１１１ １１１１ １１１１',
      ],
    ] as const) {
      const findings = pii(callText(fn(raw)))
      expect(findings, raw).toEqual([
        {
          kind,
          source: 'messages',
          index: 1,
          tool_call: 0,
          path: raw.startsWith('{"to"') ? '/to' : '/card',
          start: raw.indexOf(value),
          end: raw.indexOf(value) + [...value].length,
          text: value,
        },
      ])
      // The raw slice decodes to what the client reads.
      expect(JSON.parse(`"${findings[0]?.text}"`).normalize('NFKC')).toMatch(
        /^(4111 1111 1111 1111|alice@example\.com)$/,
      )
    }
  })

  it('read keywords and regex in the decoded values', () => {
    const raw = '{"note": "refund\\u0020guarantee", "code": "ORD\\u002d1234"}'
    const target = callText(fn(raw))
    expect(keywordsMatcher(['refund guarantee'])(target)).toMatchObject([
      { kind: 'keyword', path: '/note', text: 'refund\\u0020guarantee' },
    ])
    expect(regexMatcher('ORD-\\d{4}')(target)).toMatchObject([
      { kind: 'regex', path: '/code', text: 'ORD\\u002d1234' },
    ])
    // JSON syntax is not read: no quote, brace or escape is there to match.
    expect(regexMatcher('"|\\{|\\\\u')(target)).toEqual([])
  })

  it('read the name of the function called, with offsets in the name', () => {
    const target = callText(fn('{"all": true}', 'delete_everything'))
    expect(target.text).toBe('delete_everything\nall: true')
    expect(keywordsMatcher(['delete_everything'])(target)).toEqual([
      {
        kind: 'keyword',
        source: 'messages',
        index: 1,
        tool_call: 0,
        path: NAME_PATH,
        start: 0,
        end: 17,
        text: 'delete_everything',
      },
    ])
    // A call with a name and no arguments reads as its name; a custom tool as its name and input.
    expect(callText({ function: { name: 'noop' } }).text).toBe('noop')
    expect(callText({ type: 'custom', custom: { name: 'shell', input: 'rm -rf /' } }).text).toBe(
      'shell\nrm -rf /',
    )
    expect(readToolCall({ id: 'x' })).toBeNull()
  })

  it('clip a match running from the name into the arguments to the name', () => {
    const target = callText(fn('{"x": 1}', 'wipe'))
    expect(regexMatcher('wipe\\nx')(target)).toMatchObject([
      { path: NAME_PATH, start: 0, end: 4, text: 'wipe' },
    ])
    expect(regexMatcher('\\nx: 1')(target)).toMatchObject([{ path: '/x', start: 2, end: 7, text: 'x": 1' }])
  })

  it('measure a length rule on the arguments as sent', () => {
    const raw = `{"a": "${'\\u0041'.repeat(20)}"}`
    expect(lengthMatcher(100)(callText(fn(raw)))).toMatchObject([
      { kind: 'length', start: 0, end: raw.length, path: '' },
    ])
    expect(lengthMatcher(raw.length)(callText(fn(raw)))).toEqual([])
  })

  it('give scored rules the decoded values, not JSON syntax', () => {
    const raw = '{"message": "you \\u0069diot"}'
    const scored = toxicityHeuristic(null)(callText(fn(raw, 'send')))
    expect(scored.score).toBeGreaterThan(0)
    expect(scored.findings).toMatchObject([{ kind: 'toxicity', path: '/message', text: '\\u0069diot' }])
  })
})

/** A JSON text of `value` with every character of every string written at random: as is, or escaped. */
function serialise(value: unknown, choices: () => number): string {
  const space = () => [' ', '', '', '\n  ', '\t'][choices() % 5] as string
  const string = (s: string) => {
    let out = '"'
    for (const c of s) {
      const code = c.codePointAt(0) as number
      const pick = choices() % 3
      if (c === '"' || c === '\\' || code < 0x20 || pick === 0) {
        if (code > 0xffff) {
          const high = Math.floor((code - 0x10000) / 0x400) + 0xd800
          const low = ((code - 0x10000) % 0x400) + 0xdc00
          out += `\\u${high.toString(16)}\\u${low.toString(16).toUpperCase()}`
        } else if (c === '/' && pick === 0) out += '\\/'
        else out += `\\u${code.toString(16).padStart(4, '0')}`
      } else out += c
    }
    return `${out}"`
  }
  const write = (v: unknown): string => {
    if (typeof v === 'string') return string(v)
    if (Array.isArray(v)) return `[${space()}${v.map(write).join(`,${space()}`)}${space()}]`
    if (v !== null && typeof v === 'object')
      return `{${space()}${Object.entries(v)
        .map(([k, item]) => `${string(k)}${space()}:${space()}${write(item)}`)
        .join(`,${space()}`)}${space()}}`
    return JSON.stringify(v)
  }
  return space() + write(value) + space()
}

describe('planted card numbers and addresses, however the JSON writes them', () => {
  const PLANTED = [
    { value: '4111 1111 1111 1111', kind: 'credit_card' },
    { value: '5555-5555-5555-4444', kind: 'credit_card' },
    { value: '４１１１ １１１１ １１１１ １１１１', kind: 'credit_card' },
    { value: 'alice@example.com', kind: 'email' },
    { value: 'jo.bloggs+tag@mail.example.org', kind: 'email' },
  ] as const
  // Filler that holds no pii: words, emoji, characters JSON must escape.
  const filler = fc.oneof(
    fc.constantFrom(
      'order',
      'note',
      'a/b',
      'm~n',
      'é',
      '😀',
      'line\nbreak',
      'tab\there',
      'quote"d',
      'back\\slash',
      '',
    ),
    fc.integer({ min: 0, max: 999 }),
    fc.boolean(),
    fc.constant(null),
  )
  /** A value holding the planted one at the end of `route`: each step an object member or an array item. */
  const route = fc.array(
    fc.record({
      key: fc.oneof(fc.constantFrom('card', 'to', 'a/b', 'm~n', '😀', 'x"y'), fc.string({ maxLength: 4 })),
      array: fc.boolean(),
      before: fc.array(filler, { maxLength: 2 }),
    }),
    { maxLength: 4 },
  )
  const plant = fc.record({
    planted: fc.constantFrom(...PLANTED),
    route,
    asKey: fc.boolean(),
    asNumber: fc.boolean(),
    choices: fc.array(fc.nat(), { minLength: 1, maxLength: 64 }),
  })

  it('finds it, and the finding’s text in the arguments decodes to the value, at its path', () => {
    fc.assert(
      fc.property(plant, ({ planted, route, asKey, asNumber, choices }) => {
        let k = 0
        const next = () => choices[k++ % choices.length] as number
        const number = asNumber && planted.value === '4111 1111 1111 1111'
        // The innermost value, then each step out; the pointer built from the inside out.
        const key = asKey && !number
        let value: unknown = number ? 4111111111111111 : key ? { [planted.value]: 1 } : planted.value
        let path = key ? `/${planted.value}` : ''
        for (const step of [...route].reverse()) {
          const token = step.key.replaceAll('~', '~0').replaceAll('/', '~1')
          if (step.array) {
            value = [...step.before, value]
            path = `/${step.before.length}${path}`
          } else {
            const object: Record<string, unknown> = {}
            step.before.forEach((item, i) => {
              object[`f${i}`] = item
            })
            object[step.key] = value
            value = object
            path = `/${token}${path}`
          }
        }
        const raw = serialise(value, next)
        expect(JSON.parse(raw)).toEqual(value)
        const findings = piiMatcher([planted.kind])(callText(fn(raw)))
        expect(findings, raw).toHaveLength(1)
        const [finding] = findings as [Finding]
        expect(finding).toMatchObject({ kind: planted.kind, tool_call: 0, path })
        expect(cpSlice(raw, finding.start, finding.end)).toBe(finding.text)
        const decoded = number ? (finding.text as string) : JSON.parse(`"${finding.text}"`)
        expect(decoded).toBe(number ? '4111111111111111' : planted.value)
      }),
      { numRuns: 1000 },
    )
  })
})

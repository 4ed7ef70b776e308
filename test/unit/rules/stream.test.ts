import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { shippedClassifiers } from '../../../src/models/shipped.js'
import { leadingLiteral, piiPending, regexPending, regexShape } from '../../../src/rules/detectors/pending.js'
import { compilePolicy, type EvaluablePolicy, evaluate } from '../../../src/rules/evaluate.js'
import { ReleaseEngine, streamPlan, ToolCallWatch, WindowCutter } from '../../../src/rules/stream.js'
import type { Finding } from '../../../src/rules/types.js'
import { normalizeRule } from '../../../src/rules/validation.js'
import type { PolicyRuleInput } from '../../../src/schemas/policies.js'

function policy(id: string, rules: PolicyRuleInput[], extra: Partial<EvaluablePolicy> = {}) {
  return compilePolicy(
    {
      id,
      revision: 1,
      draft: false,
      target: ['output'],
      definition: null,
      override_response: null,
      mode: 'enforce',
      on_error: 'fail_closed',
      ...extra,
      rules: rules.map(normalizeRule),
    },
    shippedClassifiers(),
  )
}

const POLICIES = {
  pii: policy('pii', [{ type: 'pii', expected: 'pass' }]),
  cards: policy('cards', [{ type: 'pii', expected: 'pass', flagged: ['credit_card'] }]),
  keywords: policy('keywords', [
    { type: 'keywords', expected: 'pass', flagged: ['secret plan', 'café', 'ignore previous instructions'] },
  ]),
  bounded: policy('bounded', [{ type: 'regex', expected: 'pass', value: 'ORD-\\d{4}\\b' }]),
  folded: policy('folded', [{ type: 'regex', expected: 'pass', value: '(?i)token=\\w{4}' }]),
  line: policy('line', [{ type: 'regex', expected: 'pass', value: 'TODO:[^\\n]*!' }]),
  length: policy('length', [{ type: 'length', expected: 'pass', value: '120' }]),
}
type PolicyName = keyof typeof POLICIES

/** Findings each kind of detector flags, near misses, and ordinary text with astral characters and marks. */
const PLANTED = [
  'jane.doe@example.com',
  'ops+alerts@mail.example.org',
  '+1 415 555 2671',
  '(415) 555-2671',
  '4111 1111 1111 1111',
  '4111111111111111',
  '5500-0000-0000-0004',
  'DE89 3704 0044 0532 0130 00',
  'GB82WEST12345698765432',
  '123-45-6789',
  'SSN: 123456789',
  '192.168.1.10',
  '10.0.0.0/24',
  '2001:db8::1',
  'AKIAIOSFODNN7EXAMPLE',
  'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
  'secret plan',
  'Secret  Plan',
  'café',
  'cafe\u0301',
  'ignore previous instructions',
  'ORD-1234',
  'TODO: call back!',
  'TOKEN=ab12',
  'ToKen=zz99',
  'toKen=ſſſſ',
  // Read in NFKC by the pii rule: full-width digits and letters, and a card's comma grouping.
  '４１１１ １１１１ １１１１ １１１１',
  '４１１１－1111－１１１１－1111',
  'ａｌｉｃｅ＠ｅｘａｍｐｌｅ．ｃｏｍ',
  'card 4111,1111,1111,1111',
  // The kinds of section 13.
  '16Yeky6GMjeNkAiNcBY7ZhrLoMSgg1BoyZ',
  'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  '00:1A:2B:3C:4D:5E',
  'aa-bb-cc-dd-ee-0f',
  '911-70-1234',
  'routing no. 121000358',
  'AB 12 34 56 C',
  'NHS number 943 476 5919',
  '55555555-K',
  'X9613851N',
  'RSSMRA45C12F205C',
  'PESEL: 44051401458',
  '3123 4567 8909',
  'ABCPD1234Z',
  'S2740116C',
  'TFN 876 543 210',
  '51 824 753 556',
  '2123 45670 1',
  'born on 4 July 1976',
  'DOB: 12/03/1990',
]
const NEAR = [
  '4111 1111 1111 1112',
  '415 555',
  'cafe',
  'secret planner',
  'ORD-12345',
  'token=ab',
  'tokens',
  'v1.2.3.4',
  'TODO: later',
  '12.03.2024',
  '2024',
  'jane@',
  'DE89',
  '４１１１ １１１１',
  'card 4111,1111,1111,1112',
  '4111,1111,1111,1111',
  '16Yeky6GMjeNkAiNcBY7ZhrLoMSgg1Boy',
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe',
  '00:1A:2B:3C:4D',
  'AB 12 34 56',
  '5555555',
  'RSSMRA45C12F205',
  'S274011',
  'born on 4 July',
  'DOB: 12/03',
]
const WORDS = [
  'the',
  'order',
  'ships',
  'tomorrow',
  'I',
  'at',
  'de',
  'face',
  'résumé',
  'naïve',
  '😀',
  '𝒳yz',
  'e\u0301',
  'ok.',
  '42',
  '7',
  '-',
  ':',
  'you',
  'Telefon:',
  'ssn',
  'NHS',
  'born',
  'PESEL',
  '４２',
  'ｏｋ',
  ',',
]
const SEPARATORS = [' ', ' ', ' ', '', '\n', ', ', '. ', '  ', '-', '.']

const piece = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...WORDS) },
  { weight: 1, arbitrary: fc.constantFrom(...PLANTED) },
  { weight: 1, arbitrary: fc.constantFrom(...NEAR) },
)
const reply = fc
  .array(fc.tuple(piece, fc.constantFrom(...SEPARATORS)), { maxLength: 40 })
  .map((parts) => parts.map(([p, s]) => p + s).join(''))
const cleanReply = fc
  .array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...SEPARATORS)), { maxLength: 60 })
  .map((parts) => parts.map(([p, s]) => p + s).join(''))

/** Ways a reply is cut into chunks: 1, 2 or 3 code points, whole words, or random sizes. */
const chunking = fc.oneof(
  fc.constantFrom<'1' | '2' | '3' | 'words'>('1', '2', '3', 'words'),
  fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 20 }),
)
function cut(text: string, how: '1' | '2' | '3' | 'words' | number[]): string[] {
  if (how === 'words') return text.split(/(?<=\s)/)
  const points = [...text]
  const sizes = Array.isArray(how) ? how : [Number(how)]
  const chunks: string[] = []
  for (let i = 0, k = 0; i < points.length; k++) {
    const size = sizes[k % sizes.length] as number
    chunks.push(points.slice(i, i + size).join(''))
    i += size
  }
  return chunks
}

const cpLength = (text: string) => [...text].length

/** The findings of every failing enforced rule of a whole-text evaluation of the reply. */
async function failing(names: readonly PolicyName[], text: string) {
  const outcome = await evaluate(
    names.map((n) => POLICIES[n]),
    {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: text },
      ],
      context: null,
    },
    { judge: null },
  )
  const findings: Finding[] = []
  for (const p of outcome.policies)
    for (const r of p.rules) if (r.status === 'fail') findings.push(...r.findings)
  return { verdict: outcome.verdict, findings, outcome }
}

function stream(names: readonly PolicyName[], chunks: readonly string[]) {
  const plan = streamPlan(names.map((n) => POLICIES[n]))
  if (plan.mode !== 'incremental') throw new Error('expected an incremental plan')
  const engine = new ReleaseEngine(plan.detectors)
  let released = ''
  let violation = false
  for (const chunk of chunks) {
    const step = engine.push(chunk)
    released += step.release
    if (step.violation) {
      violation = true
      break
    }
  }
  if (!violation) {
    const step = engine.end()
    released += step.release
    violation = step.violation
  }
  // What was released is text received, in order, from its start.
  expect(engine.received.startsWith(released)).toBe(true)
  return { released, violation, received: engine.received }
}

const names = fc.subarray(Object.keys(POLICIES) as PolicyName[], { minLength: 1 })

describe('incremental release of a streamed reply', () => {
  it('never releases text a failing rule of the whole reply flags, and decides as the whole text does', async () => {
    await fc.assert(
      fc.asyncProperty(names, reply, chunking, async (selected, text, how) => {
        const { released, violation, received } = stream(selected, cut(text, how))
        expect(text.startsWith(received)).toBe(true)
        expect(received.startsWith(released)).toBe(true)
        const whole = await failing(selected, text)
        // (a) nothing released overlaps a finding of a failing rule of the whole reply.
        const sent = cpLength(released)
        // A length finding spans the whole reply: nothing past the maximum is released.
        for (const f of whole.findings)
          if (f.kind === 'length') expect(sent).toBeLessThanOrEqual(120)
          else expect(f.start).toBeGreaterThanOrEqual(sent)
        if (violation) {
          // A stopped stream: the text received fails as the whole reply does, and the
          // evaluation logged for it (of the text received) flags nothing that was sent.
          const partial = await failing(selected, received)
          expect(partial.verdict).toBe('fail')
          expect(whole.verdict).toBe('fail')
          for (const f of partial.findings)
            if (f.kind !== 'length') expect(f.start).toBeGreaterThanOrEqual(sent)
        } else {
          // (b)/(c) a reply that passes is released whole and unchanged; one that fails is stopped.
          expect(whole.verdict).toBe('pass')
          expect(received).toBe(text)
          expect(released).toBe(text)
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 400) },
    )
  })

  it('releases a clean reply whole and unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(names, cleanReply, chunking, async (selected, text, how) => {
        const whole = await failing(selected, text)
        fc.pre(whole.verdict === 'pass')
        const { released, violation } = stream(selected, cut(text, how))
        expect(violation).toBe(false)
        expect(released).toBe(text)
      }),
      { numRuns: 200 },
    )
  })

  it('holds back only what may be in progress', () => {
    const plan = streamPlan([POLICIES.pii, POLICIES.keywords])
    if (plan.mode !== 'incremental') throw new Error('expected an incremental plan')
    const engine = new ReleaseEngine(plan.detectors)
    expect(engine.push('Your order ships ').release).toBe('Your order ships ')
    // A run of digits may become a card number: held back.
    expect(engine.push('on 4111 1111').release).toBe('on ')
    expect(engine.push(' 1111 1111').release).toBe('')
    expect(engine.push(' thanks').violation).toBe(true)
  })

  it('watches each tool call’s arguments as they grow, and tells of a violation as soon as a detector is sure', () => {
    const plan = streamPlan([POLICIES.cards])
    if (plan.mode !== 'incremental') throw new Error('expected an incremental plan')
    const calls = new ToolCallWatch(plan.detectors)
    expect(calls.push(0, '{"order": 1042')).toBe(false)
    expect(calls.push(1, '{"note": "ok"}')).toBe(false)
    expect(calls.push(0, ', "memo": "call me"}')).toBe(false)
    expect(calls.end()).toBe(false)

    const carded = new ToolCallWatch(plan.detectors)
    // A run of digits that may still become a card is no violation yet.
    expect(carded.push(0, '{"card": "4111 1111')).toBe(false)
    expect(carded.push(0, ' 1111 1111"')).toBe(true)
    // A card at the very end of the arguments is found when the reply ends.
    const last = new ToolCallWatch(plan.detectors)
    expect(last.push(2, '{"card": "4111 1111 1111 1111')).toBe(false)
    expect(last.end()).toBe(true)
  })

  it('fails a length rule as soon as the reply is too long', () => {
    const plan = streamPlan([POLICIES.length])
    if (plan.mode !== 'incremental') throw new Error('expected an incremental plan')
    const engine = new ReleaseEngine(plan.detectors)
    expect(engine.push('x'.repeat(120)).release).toBe('x'.repeat(120))
    const step = engine.push('y'.repeat(10))
    expect(step).toEqual({ release: '', violation: true })
  })

  it('buffers a reply judged whole, scores windows for scored rules, and relays one no enforced output rule reads', () => {
    const grounded = policy('f', [{ type: 'factuality', expected: 'pass' }])
    expect(streamPlan([grounded]).mode).toBe('buffered')
    expect(streamPlan([policy('r', [{ type: 'relevance', expected: 'pass' }])]).mode).toBe('buffered')
    expect(streamPlan([policy('x', [{ type: 'toxicity', expected: 'fail' }])]).mode).toBe('buffered')
    const scored = policy('s', [
      { type: 'pii', expected: 'pass' },
      { type: 'toxicity', expected: 'pass' },
      { type: 'prompt_injection', expected: 'pass' },
    ])
    const custom = policy('c', [{ type: 'custom', expected: 'pass' }], { definition: 'Polite replies.' })
    const plan = streamPlan([scored, custom])
    if (plan.mode !== 'incremental') throw new Error('expected an incremental plan')
    expect(plan.detectors).toHaveLength(1)
    // Each policy keeps its scored rules only, with its own settings (on_error, override).
    expect(plan.scored.map((p) => [p.policy.id, p.rules.map((r) => r.type)])).toEqual([
      ['s', ['toxicity', 'prompt_injection']],
      ['c', ['custom']],
    ])
    const monitored = policy('m', [{ type: 'toxicity', expected: 'pass' }], { mode: 'monitor' })
    const input = policy('i', [{ type: 'pii', expected: 'pass' }], { target: ['input'] })
    expect(streamPlan([monitored, input])).toEqual({ mode: 'incremental', detectors: [], scored: [] })
  })
})

/** Every window `WindowCutter` cuts of `text` fed in `chunks`, then ended. */
function windowsOf(size: number, chunks: readonly string[]) {
  const cutter = new WindowCutter(size)
  const windows: { from: number; start: number; end: number; text: string; final: boolean }[] = []
  let text = ''
  for (const chunk of chunks) {
    text += chunk
    for (let w = cutter.next(text, false); w !== null; w = cutter.next(text, false))
      windows.push({ ...w, final: false })
  }
  for (let w = cutter.next(text, true); w !== null; w = cutter.next(text, true))
    windows.push({ ...w, final: true })
  return windows
}

describe('windows of scored rules', () => {
  it('holds at least the window size, extended to the end of the sentence', () => {
    const text = 'Hello there, friend. How are you today? Fine, thanks! Bye'
    const windows = windowsOf(10, [text])
    expect(windows.map((w) => text.slice(w.start, w.end))).toEqual([
      'Hello there, friend.',
      ' How are you today?',
      ' Fine, thanks!',
      ' Bye',
    ])
    // The last window is the rest, once the reply is complete.
    expect(windows.map((w) => w.final)).toEqual([false, false, false, true])
  })

  it('scores a window with the one before it as context', () => {
    const text = 'First sentence here. Second sentence here. Third one.'
    const windows = windowsOf(15, [text])
    expect(windows.map((w) => w.text)).toEqual([
      'First sentence here.',
      'First sentence here. Second sentence here.',
      ' Second sentence here. Third one.',
    ])
    expect(windows.map((w) => [w.from, w.start])).toEqual([
      [0, 0],
      [0, 20],
      [20, 42],
    ])
  })

  it('ends a sentence only at a stop followed by whitespace, or a line break, and waits for what follows a stop', () => {
    const cutter = new WindowCutter(10)
    expect(cutter.next('Pi is 3.', false)).toBeNull()
    expect(cutter.next('Pi is 3.14 or so.', false)).toBeNull()
    const w = cutter.next('Pi is 3.14 or so. Next', false)
    expect(w?.text).toBe('Pi is 3.14 or so.')
    // A line break ends a window by itself; a stop at the very end ends it once the reply is complete.
    expect(windowsOf(3, ['ab\ncdef\ngh.']).map((x) => x.text.slice(x.start - x.from))).toEqual([
      'ab\n',
      'cdef\n',
      'gh.',
    ])
    // Windows fall in the same places whatever the chunking.
    const text = 'One two three. Four five six! Seven eight nine? Ten.\nEleven twelve.'
    const whole = windowsOf(8, [text])
    expect(windowsOf(8, [...text])).toEqual(whole)
    expect(windowsOf(8, [text.slice(0, 13), text.slice(13, 14), text.slice(14)])).toEqual(whole)
  })

  it('counts code points, never splits a surrogate pair, and cuts text without punctuation at four times the size', () => {
    const astral = '😀'.repeat(4)
    expect(windowsOf(4, [`${astral}. `, 'x']).map((w) => w.text)).toEqual([`${astral}.`, `${astral}. x`])
    // 40 words of 4 letters without a stop: a window ends at its last space past the size, by 4 × size.
    const words = Array.from({ length: 40 }, () => 'abcd').join(' ')
    const windows = windowsOf(10, [words])
    for (const w of windows.slice(0, -1)) {
      expect(w.end - w.start).toBeGreaterThanOrEqual(10)
      expect(w.end - w.start).toBeLessThanOrEqual(40)
      expect(words[w.end - 1]).toBe(' ')
    }
    expect(windows.at(-1)?.end).toBe(words.length)
  })

  it('cuts no window of an empty reply, nor after a reply ending on a window', () => {
    expect(windowsOf(5, [])).toEqual([])
    expect(windowsOf(8, ['Hello, world\n'])).toHaveLength(1)
    expect(windowsOf(8, ['Hello, world!\n']).map((w) => w.end)).toEqual([13, 14])
  })
})

describe('release under scored rules', () => {
  it('releases a window only once it passed, and never past what the detectors allow', () => {
    const plan = streamPlan([POLICIES.cards])
    if (plan.mode !== 'incremental') throw new Error('expected an incremental plan')
    const engine = new ReleaseEngine(plan.detectors, 12)
    let sent = ''
    const sending = (step: { release: string }) => {
      sent += step.release
      return step.release
    }
    expect(sending(engine.push('Your order ships today. '))).toBe('')
    const first = engine.nextWindow()
    expect(first).toMatchObject({ start: 0, end: 23, text: 'Your order ships today.' })
    expect(engine.nextWindow()).toBeNull()
    expect(sending(engine.passed(23))).toBe('Your order ships today.')
    // The next window passed, but a run of digits at its end may still be a card: held back.
    expect(sending(engine.push('Call us on 4111. '))).toBe('')
    const second = engine.nextWindow()
    expect(second?.end).toBe(40)
    expect(sending(engine.passed(40))).toBe(' Call us on ')
    // The run of digits ended: the window that passed is released whole; the rest waits for its window.
    expect(sending(engine.push('Then bye.'))).toBe('4111.')
    expect(engine.nextWindow()).toBeNull()
    expect(sending(engine.end())).toBe('')
    const last = engine.nextWindow()
    expect(last).toMatchObject({ start: 40, end: 50, text: ' Call us on 4111. Then bye.' })
    expect(sending(engine.passed(50))).toBe(' Then bye.')
    // Every window passed: the whole reply was released, once.
    expect(sent).toBe(engine.received)
  })

  it('fails the reply when a window fails', () => {
    const engine = new ReleaseEngine([], 8)
    engine.push('Hello world. More')
    expect(engine.nextWindow()?.end).toBe(12)
    engine.failed()
    expect(engine.push(' text').violation).toBe(true)
    expect(engine.nextWindow()).toBeNull()
    expect(engine.passed(12)).toEqual({ release: '', violation: true })
  })
})

describe('a regex rule holds back only where a match may have begun', () => {
  it.each([
    ['ORD-\\d{4}\\b', 'ORD-', false],
    ['(?i)Token=\\w{4}', 'token=', true],
    ['\\bfoo', 'foo', false],
    ['^TODO', 'TODO', false],
    ['ab?c', 'a', false],
    ['x\\.y+z', 'x.', false],
    ['abc(d|e)f', 'abc', false],
    ['a|b', '', false],
    ['[ab]c', '', false],
    ['(?i)café', '', false],
  ])('%s begins with %j', (pattern, literal, ignoreCase) => {
    expect(leadingLiteral(pattern)).toEqual(
      literal === '' ? { literal, ignoreCase: false } : { literal, ignoreCase },
    )
  })

  it('releases text with no start of a match, and holds a possible start', () => {
    const pending = regexPending('order [0-9]{6}')
    const at = (text: string) => text.slice(pending(text))
    expect(at('see the attached file for details')).toBe('')
    expect(at('please see ord')).toBe('ord')
    expect(at('please see order 12')).toBe('order 12')
    expect(at('the word order')).toBe('order')
    // Case-insensitive patterns hold whatever RE2's case folding may read as the start.
    expect(regexPending('(?i)secret=\\d{2}')('a new ſECRE')).toBe('a new '.length)
  })
})

describe('an api_key rule holds back only where a key may have begun', () => {
  const pending = piiPending(['api_key'])
  const held = (text: string) => text.slice(pending(text))
  it.each([
    ['The end', ''],
    ['The answer is', 's'],
    ['your token sk', 'sk'],
    ['your token sk-pro', 'sk-pro'],
    ['use (ghp_abc', 'ghp_abc'],
    ['shop', 'op'],
    ['see https://user:pa', 'user:pa'],
    ['see HTTPS://hooks.sla', 'HTTPS://hooks.sla'],
    ['aws_secret_access_key = wJalr', 'wJalr'],
    ['-----BEGIN RSA PRIV', '-----BEGIN RSA PRIV'],
  ])('%j holds %j', (text, tail) => {
    expect(held(text)).toBe(tail)
  })
})

describe('regex shapes', () => {
  it.each([
    ['ORD-\\d{4}', 4 + 4, false],
    ['abc|de', 3, false],
    ['(?:ab){2,3}c?', 7, false],
    ['a+', null, false],
    ['[^x]{3}', 3, true],
    ['(?s).{2}', 2, true],
    ['foo.*bar', null, false],
    ['\\d{3}\\s\\d{3}', 7, true],
    ['😀{2}', 2, false],
  ])('%s', (pattern, maxLength, crossesLines) => {
    expect(regexShape(pattern)).toEqual({ maxLength, crossesLines })
  })
})

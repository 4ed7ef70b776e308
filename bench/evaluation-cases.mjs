// The conversations and the policy of the evaluation benchmarks, shared by the one over HTTP
// (bench/evaluate-http.mjs) and the one in process (bench/evaluate.mjs), so that both measure
// the same work.

/** 100 phrases a support bot might flag; one of them ("wire transfer") occurs in the reference conversation. */
export const PHRASES = [
  'wire transfer',
  'internal only',
  'social security number',
  'api key',
  'password reset link',
  ...Array.from({ length: 95 }, (_, i) => `restricted topic ${i} phrase`),
]

/** The reference policy as the API takes it: pii (all kinds), keywords, two regex rules, length. */
export const REFERENCE_POLICY = {
  id: 'reference',
  rules: [
    { type: 'pii' },
    { type: 'keywords', flagged: PHRASES },
    { type: 'regex', value: '\\b(?:secret|token|password)\\s*[:=]\\s*\\S+' },
    { type: 'regex', value: '\\border\\s+#?\\d{6,}\\b' },
    { type: 'length', value: '20000' },
  ],
  target: ['user', 'assistant', 'system'],
  override_response: 'Sorry, I cannot share that.',
}

const filler =
  'Our refund policy covers duplicate charges on any card; refunds arrive within five business days of approval and show on the next statement. '

/** The reference conversation: 6 messages, about 4 KB, one email, phone number, card number and keyword. */
export const REFERENCE_MESSAGES = [
  {
    role: 'system',
    content: `You are a helpful support agent for Acme. Answer briefly and politely. ${filler.repeat(3)}`,
  },
  {
    role: 'user',
    content: `Hi, my card 4111 1111 1111 1111 was charged twice for the same order last week. ${filler.repeat(4)}`,
  },
  {
    role: 'assistant',
    content: `Sorry about that! Let me look into the duplicate charge. ${filler.repeat(4)}`,
  },
  {
    role: 'user',
    content: `Please write to jane.doe@example.com or call me on +1 415 555 0134 in the afternoon. ${filler.repeat(4)}`,
  },
  {
    role: 'assistant',
    content: `Thanks, I have opened a refund request. ${filler.repeat(4)}`,
  },
  {
    role: 'user',
    content: `Could you refund it by wire transfer instead of to the card? ${filler.repeat(3)}`,
  },
]

/**
 * A clean conversation of about the reference's size (3.5 KB of text, 6 messages) with nothing
 * for the reference policy to find, as most production text is: prose, a few numbers, dates and
 * times, and code with dots, colons, brackets and digits.
 */
export const CLEAN_MESSAGES = [
  {
    role: 'system',
    content:
      'You are a helpful assistant for a small team of web developers. Answer in plain English, keep code ' +
      'samples short and explain the reasoning behind each change. When the question is ambiguous, ask one ' +
      'clarifying question first. Prefer the standard library over new dependencies, and mention the trade-offs ' +
      'of each approach in a sentence or two. The team works in TypeScript on Node 20 and React 18, tests ' +
      'with Vitest, and deploys twice a week; most questions are about the front end, some about the build.',
  },
  {
    role: 'user',
    content:
      'Our search box fires a request on every keystroke and the API is struggling: on Monday we saw about ' +
      '40 requests a second from a single tab during the 10:30 stand-up demo. I would like to wait until the ' +
      'user stops typing for 250 ms before sending anything. Is a debounce the right tool here, or should we ' +
      'throttle instead? We target the last 2 versions of each browser and build with TypeScript 5.4.',
  },
  {
    role: 'assistant',
    content:
      'A debounce fits: you want one request after the typing settles, not one every few hundred ' +
      'milliseconds while it goes on, which is what a throttle gives you. Here is a small typed version:\n\n' +
      '```ts\n' +
      'export function debounce<A extends unknown[]>(fn: (...args: A) => void, wait = 250) {\n' +
      '  let timer: ReturnType<typeof setTimeout> | undefined\n' +
      '  return (...args: A): void => {\n' +
      '    if (timer !== undefined) clearTimeout(timer)\n' +
      '    timer = setTimeout(() => fn(...args), wait)\n' +
      '  }\n' +
      '}\n' +
      '```\n\n' +
      'Each call clears the pending timer and starts a new one, so only the last call within 250 ms runs. ' +
      'Keep the debounced function in a ref (or at module scope) so that it survives re-renders; a new ' +
      'function on every render would start a new timer each time and never wait at all. If the box also ' +
      'submits on Enter, call the handler directly there and clear the timer, so that the user does not ' +
      'wait a quarter of a second after an explicit action.',
  },
  {
    role: 'user',
    content:
      'That works, thanks. Two follow-ups. First, results sometimes arrive out of order: a slow answer for ' +
      '"reac" lands after the answer for "react" and overwrites it. Second, how would I test this with ' +
      'Vitest without waiting in real time? The suite already takes 3 minutes and I do not want to add to it.',
  },
  {
    role: 'assistant',
    content:
      'For the ordering problem, cancel the previous request when a new one starts. An AbortController does ' +
      'it in a few lines:\n\n' +
      '```ts\n' +
      'let controller: AbortController | null = null\n' +
      'async function search(query: string): Promise<Result[]> {\n' +
      '  controller?.abort()\n' +
      '  controller = new AbortController()\n' +
      "  const res = await fetch('/search?q=' + encodeURIComponent(query), { signal: controller.signal })\n" +
      '  return (await res.json()).items.slice(0, 20)\n' +
      '}\n' +
      '```\n\n' +
      'For the tests, use fake timers: call vi.useFakeTimers() in beforeEach, trigger the input a few times, ' +
      'then vi.advanceTimersByTime(250) and assert that the handler ran once with the last value. Restore ' +
      'real timers in afterEach with vi.useRealTimers(). The test runs in a couple of milliseconds. For the ' +
      'abort, stub fetch with vi.fn() that returns a promise you resolve by hand, start two searches, resolve ' +
      'the second before the first, and check that only its results reach the list.',
  },
  {
    role: 'user',
    content:
      'Perfect, both changes are merged and the load on the search endpoint dropped to about 3 requests a ' +
      'second per tab. One last thing: should the debounce delay be configurable per page, or is a single ' +
      'constant in the config module enough for now? We have 4 pages with a search box and they all behave ' +
      'the same way today. Product mentioned that the admin pages might search a much larger table later ' +
      'this year, where 400 ms could feel better, but nothing is planned before the 2.0 release in March.',
  },
]

/** About 0.9 MiB of conversation text in 15 messages: the reference texts repeated. */
export const BIG_TEXT_TARGET = Math.floor(0.9 * 1024 * 1024)
export const BIG_MESSAGES = (() => {
  const unit = REFERENCE_MESSAGES.map((m) => m.content).join('\n')
  const per = Math.floor(BIG_TEXT_TARGET / 15)
  const content = unit.repeat(Math.ceil(per / unit.length)).slice(0, per)
  return Array.from({ length: 15 }, (_, i) => ({
    role: i === 0 ? 'system' : i % 2 ? 'user' : 'assistant',
    content,
  }))
})()

/** How many bytes of text the messages hold (UTF-8). */
export const textBytes = (messages) => messages.reduce((a, m) => a + Buffer.byteLength(m.content), 0)

/** The request bodies of the evaluation call for the three conversations. */
export const REFERENCE_BODY = JSON.stringify({ messages: REFERENCE_MESSAGES })
/**
 * The reference conversation at exactly 4,096 characters of text: its last message grown with the
 * filler (prose about refunds, nothing for the policy to find).
 */
export const REFERENCE_4K_MESSAGES = (() => {
  const messages = REFERENCE_MESSAGES.map((m) => ({ ...m }))
  const short = 4096 - messages.reduce((n, m) => n + m.content.length, 0)
  const last = messages[messages.length - 1]
  last.content += filler.repeat(Math.ceil(short / filler.length)).slice(0, short)
  return messages
})()
export const REFERENCE_4K_BODY = JSON.stringify({ messages: REFERENCE_4K_MESSAGES })
export const CLEAN_BODY = JSON.stringify({ messages: CLEAN_MESSAGES })
export const BIG_BODY = JSON.stringify({ messages: BIG_MESSAGES })

import { describe, expect, it } from 'vitest'
import { entryJson, logTextsJson, serializeEntry } from '../../src/evaluation/log-json.js'
import { type LoggedEvaluation, LoggedEvaluationSchema } from '../../src/schemas/evaluations.js'

// A pooled evaluation's log entry is joined from its head, written on the main thread, and its
// texts, written in the worker: the log must hold the same bytes as the whole entry written at once.
describe('entryJson', () => {
  // The schema's own example, its texts taken off, a reason and a response with characters to escape.
  const { messages: _m, context: _c, ...example } = LoggedEvaluationSchema.examples[0] as LoggedEvaluation
  const head: Omit<LoggedEvaluation, 'messages' | 'context'> = {
    ...example,
    override_response: 'Sorry — “no”. \u0001 "quoted" \ud83d',
    policies: example.policies.map((p) => ({
      ...p,
      rules: p.rules.map((r) => ({ ...r, reason: 'Found [CREDIT_CARD] \n é 😀' })),
    })),
  }

  const texts: Pick<LoggedEvaluation, 'messages' | 'context'>[] = [
    { messages: [{ role: 'user', content: 'My card is [CREDIT_CARD], can I get a refund?' }], context: [] },
    { messages: null, context: null },
    { messages: [], context: ['Ünïcödé 😀 \u2028 \\ "q" \n\t', 'lone \ud800 and \udc00 surrogates'] },
    {
      messages: [
        { role: 'system', content: 'é'.repeat(10_000) },
        { role: 'assistant', content: `${'x'.repeat(100_000)}\u0000` },
      ],
      context: null,
    },
  ]

  it.each(texts.map((t, i) => [i, t] as const))('writes the bytes the whole entry would (%i)', (_, t) => {
    const whole = Buffer.from(serializeEntry({ ...head, ...t } as LoggedEvaluation), 'utf8')
    const joined = entryJson(head, logTextsJson(t))
    expect(Buffer.from(joined).equals(whole)).toBe(true)
    // A buffer of its own, whole: it can be transferred to the writer thread.
    expect(joined.byteOffset).toBe(0)
    expect(joined.byteLength).toBe(joined.buffer.byteLength)
  })

  it('writes texts as bytes of their own buffer, transferable', () => {
    const bytes = logTextsJson(texts[0] as Pick<LoggedEvaluation, 'messages' | 'context'>)
    expect(bytes.byteOffset).toBe(0)
    expect(bytes.byteLength).toBe(bytes.buffer.byteLength)
    expect(JSON.parse(Buffer.from(bytes).toString('utf8'))).toEqual(texts[0])
  })
})

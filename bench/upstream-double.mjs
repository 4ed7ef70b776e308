// An OpenAI-compatible upstream: POST /v1/chat/completions reads the JSON body and answers a fixed
// completion (or, for `stream: true`, the same reply as six chunks of text between a role chunk
// and a stop chunk); POST /v1/responses answers the same text as a Response (OpenAI's Responses
// API; streamed, as its events: created, the item and part added, six text deltas, done, and
// response.completed). The far side of the proxy benchmark, so that what is measured is Warden's own
// work.
//
// DELAY_MS (default 0: at once) is how long the model takes to answer. A completion is sent whole
// DELAY_MS after its request was read. A stream's events (the eight chunks, then `[DONE]`) are
// spread evenly over the delay, as a model writes its tokens: event i of n is written at
// DELAY_MS × i / n, so the first arrives after DELAY_MS / n and the stream ends at DELAY_MS, when
// the completion would have been sent: streamed or not, the reply is complete at the same time.
import { createServer } from 'node:http'

const port = Number(process.env.PORT ?? 0)
const DELAY_MS = Number(process.env.DELAY_MS ?? 0)
if (!(DELAY_MS >= 0))
  throw new Error(`DELAY_MS must be a number of milliseconds ≥ 0, got "${process.env.DELAY_MS}"`)
const TEXT =
  'Your order 1042 left our warehouse this morning and should arrive on Thursday. You can follow it from the link in your confirmation email.'
const completion = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1795316060,
  model: 'bench-model',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: TEXT, refusal: null },
      logprobs: null,
      finish_reason: 'stop',
    },
  ],
  usage: { prompt_tokens: 60, completion_tokens: 30, total_tokens: 90 },
})
const base = {
  id: 'chatcmpl-bench',
  object: 'chat.completion.chunk',
  created: 1795316060,
  model: 'bench-model',
}
const pieces = TEXT.match(/.{1,25}/g) ?? []
/** The stream's server-sent events, in order. */
const events = [
  ...[
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
    ...pieces.map((content) => ({
      ...base,
      choices: [{ index: 0, delta: { content }, finish_reason: null }],
    })),
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  ].map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`),
  'data: [DONE]\n\n',
]

const response = {
  id: 'resp_bench',
  object: 'response',
  created_at: 1795316060,
  status: 'completed',
  error: null,
  incomplete_details: null,
  model: 'bench-model',
  output: [
    {
      type: 'message',
      id: 'msg_bench',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: TEXT, annotations: [] }],
    },
  ],
  usage: { input_tokens: 60, output_tokens: 30, total_tokens: 90 },
}
const item = response.output[0]
const at = { item_id: 'msg_bench', output_index: 0, content_index: 0 }
const responseEvents = [
  { type: 'response.created', response: { ...response, status: 'in_progress', output: [] } },
  {
    type: 'response.output_item.added',
    output_index: 0,
    item: { ...item, status: 'in_progress', content: [] },
  },
  { type: 'response.content_part.added', ...at, part: { type: 'output_text', text: '', annotations: [] } },
  ...pieces.map((delta) => ({ type: 'response.output_text.delta', ...at, delta })),
  { type: 'response.output_text.done', ...at, text: TEXT },
  { type: 'response.content_part.done', ...at, part: item.content[0] },
  { type: 'response.output_item.done', output_index: 0, item },
  { type: 'response.completed', response },
].map(
  (event, sequence_number) =>
    `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number })}\n\n`,
)
const replies = {
  '/v1/chat/completions': { whole: completion, events },
  '/v1/responses': { whole: JSON.stringify(response), events: responseEvents },
}

/** Writes the stream's events over DELAY_MS, the last one when the delay is over. */
function spread(res, events) {
  const started = performance.now()
  const due = (i) => (DELAY_MS * (i + 1)) / events.length
  let next = 0
  const write = () => {
    if (res.destroyed) return
    // Every event whose time has come: a late timer sends all that is due at once.
    while (next < events.length && performance.now() - started >= due(next) - 0.5) res.write(events[next++])
    if (next === events.length) res.end()
    else setTimeout(write, due(next) - (performance.now() - started))
  }
  setTimeout(write, due(0))
}

const server = createServer((req, res) => {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    if (req.method === 'GET') {
      res.writeHead(200).end()
      return
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    const streamed = body.stream === true
    const reply = replies[req.url] ?? replies['/v1/chat/completions']
    const payload = streamed ? reply.events.join('') : reply.whole
    const headers = {
      'content-type': streamed ? 'text/event-stream; charset=utf-8' : 'application/json',
      'content-length': Buffer.byteLength(payload),
    }
    if (DELAY_MS === 0) res.writeHead(200, headers).end(payload)
    else if (streamed) {
      res.writeHead(200, headers)
      spread(res, reply.events)
    } else setTimeout(() => res.writeHead(200, headers).end(payload), DELAY_MS)
  })
})
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening on ${server.address().port}\n`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))

// An OpenAI-compatible upstream that answers at once: POST /v1/chat/completions reads the JSON
// body and answers a fixed completion (or, for `stream: true`, the same reply as six chunks).
// The far side of the proxy benchmark, so that what is measured is Warden's own work.
import { createServer } from 'node:http'

const port = Number(process.env.PORT ?? 0)
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
const stream = `${[
  { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
  ...pieces.map((content) => ({ ...base, choices: [{ index: 0, delta: { content }, finish_reason: null }] })),
  { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
]
  .map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`)
  .join('')}data: [DONE]\n\n`

const server = createServer((req, res) => {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    if (req.method === 'GET') {
      res.writeHead(200).end()
      return
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    const payload = body.stream === true ? stream : completion
    res.writeHead(200, {
      'content-type': body.stream === true ? 'text/event-stream; charset=utf-8' : 'application/json',
      'content-length': Buffer.byteLength(payload),
    })
    res.end(payload)
  })
})
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening on ${server.address().port}\n`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))

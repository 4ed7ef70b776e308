// The least a proxy can do: node:http, reading each request's body and sending it to the upstream
// (UPSTREAM_URL, e.g. http://127.0.0.1:9000/v1/chat/completions) over a keep-alive agent, then
// relaying the answer: no authentication, no parsing, no evaluation, no log. bench/proxy.mjs
// measures it beside Warden, as the ceiling of any proxy's throughput on this machine.
import { Agent, createServer, request } from 'node:http'

const port = Number(process.env.PORT ?? 0)
const upstream = new URL(process.env.UPSTREAM_URL ?? 'http://127.0.0.1:9/v1/chat/completions')
const agent = new Agent({ keepAlive: true })

createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('bare proxy')
    return
  }
  const parts = []
  req.on('data', (part) => parts.push(part))
  req.on('end', () => {
    const body = Buffer.concat(parts)
    const out = request(
      upstream,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, {
          'content-type': answer.headers['content-type'] ?? 'text/plain',
        })
        answer.pipe(res)
      },
    )
    out.on('error', () => res.writeHead(502).end())
    out.end(body)
  })
}).listen(port, '127.0.0.1')

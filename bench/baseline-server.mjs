// The physical limit Warden is measured against: a bare node:http server that reads a JSON
// body, parses it and answers JSON. No framework, no validation, no auth, no store.
import { createServer } from 'node:http'

const port = Number(process.env.PORT ?? 0)
const server = createServer((req, res) => {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    let body = null
    if (chunks.length > 0) body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    const payload = JSON.stringify({ id: 'baseline', received: body, created: Math.floor(Date.now() / 1000) })
    res.writeHead(req.method === 'POST' ? 201 : 200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(payload),
    })
    res.end(payload)
  })
})
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening on ${server.address().port}\n`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))

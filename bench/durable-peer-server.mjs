// The durable-log peer of the evaluation call: a bare node:http server that parses the JSON body,
// appends it as one line to a log file and answers 201 once that line is on disk. Writes that
// arrive while a flush is in progress share the next one (one write and one fdatasync for the
// group), as Warden's log commits do. No validation, no auth, no rules.
import { closeSync, fdatasync, openSync, write } from 'node:fs'
import { createServer } from 'node:http'
import { join } from 'node:path'

const port = Number(process.env.PORT ?? 0)
const fd = openSync(join(process.env.PEER_DIR ?? '.', 'peer.log'), 'a')
let pending = []
let flushing = false

function flush() {
  if (flushing || pending.length === 0) return
  flushing = true
  const group = pending
  pending = []
  const bytes = Buffer.from(group.map((g) => g.line).join(''))
  write(fd, bytes, 0, bytes.length, null, (error) => {
    if (error) throw error
    fdatasync(fd, (synced) => {
      if (synced) throw synced
      for (const g of group) g.done()
      flushing = false
      flush()
    })
  })
}

let seq = 0
const server = createServer((req, res) => {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    if (req.method !== 'POST') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}')
      return
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    const id = ++seq
    const line = `${JSON.stringify({ id, created: Date.now(), body })}\n`
    pending.push({
      line,
      done: () => {
        const payload = JSON.stringify({ id, verdict: 'pass' })
        res.writeHead(201, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(payload),
        })
        res.end(payload)
      },
    })
    setImmediate(flush)
  })
})
server.listen(port, '127.0.0.1')
process.on('SIGTERM', () =>
  server.close(() => {
    closeSync(fd)
    process.exit(0)
  }),
)

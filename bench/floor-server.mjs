// The store's share of the limit: a bare server doing the durable work of a create and the reads
// of a get and of a list page the way Warden does them on SQLite, and nothing else. No validation,
// no auth, no rate limit, no logging.
//
//   POST /v1/applications      parses the body and inserts one row of Warden's shape with a
//                              UUIDv7 id; writes that arrive together share one commit (WAL,
//                              synchronous=FULL), each in its own savepoint; 201 once the commit
//                              is on disk.
//   GET  /v1/applications/:id  one row by (workspace, id) on a read-only connection.
//   GET  /v1/applications      the first page of 50 stored documents and the position of the
//                              last one, joined into the answer.
//
// Reads in one turn of the event loop share a read transaction, as Warden's do. With
// FLOOR_HTTP=fastify the same work is served by a bare Fastify instance (one plain route each, no
// hooks, schemas or logger) instead of node:http: the difference is what the framework costs.
//
// Comparing Warden with this server in the same run separates what the disk and SQLite cost from
// what Warden's HTTP layer costs.
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import Fastify from 'fastify'
import { v7 as uuidv7 } from 'uuid'

const dir = mkdtempSync(join(tmpdir(), 'warden-floor-'))
const path = join(dir, 'floor.db')
const db = new SQLite(path)
db.pragma('journal_mode = WAL')
db.pragma('synchronous = FULL')
// The columns and indexes of Warden's applications table.
db.exec(`create table applications (
  seq integer primary key autoincrement, workspace_id text not null, id text not null,
  name text not null, description text not null, provider text, model text, parameters text,
  etag text not null, created integer not null, updated integer not null, doc text not null,
  unique (workspace_id, id));
  create index applications_workspace_seq_idx on applications (workspace_id, seq)`)
const insert = db.prepare(`insert into applications
  (workspace_id, id, name, description, provider, model, parameters, etag, created, updated, doc)
  values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
const [begin, savepoint, release, commit] = ['begin', 'savepoint w', 'release w', 'commit'].map((s) =>
  db.prepare(s),
)
const reader = new SQLite(path, { readonly: true })
const find = reader.prepare('select etag, doc from applications where workspace_id = ? and id = ?')
const pageDocs = reader
  .prepare('select doc from applications where workspace_id = ? and seq > ? order by seq limit ?')
  .pluck()
const pageLast = reader
  .prepare('select seq from applications where workspace_id = ? and seq > ? order by seq limit ? offset ?')
  .pluck()
const [readBegin, readCommit] = ['begin', 'commit'].map((s) => reader.prepare(s))
let snapshot = false
function inSnapshot() {
  if (snapshot) return
  readBegin.run()
  snapshot = true
  setImmediate(() => {
    readCommit.run()
    snapshot = false
  })
}

const WORKSPACE = 'floor'
let queue = []
function flush() {
  const batch = queue
  queue = []
  begin.run()
  for (const write of batch) {
    savepoint.run()
    insert.run(...write.row)
    release.run()
  }
  commit.run()
  // Our own commit must be visible to the next read.
  if (snapshot) {
    readCommit.run()
    snapshot = false
  }
  for (const write of batch) write.done()
}

/** The durable create: resolves with the stored document once its commit is on disk. */
function create(body, done) {
  const id = body.id ?? uuidv7()
  const now = Math.floor(Date.now() / 1000)
  const etag = randomUUID().replaceAll('-', '')
  const app = {
    id,
    name: body.name,
    description: body.description ?? '',
    provider: body.provider ?? null,
    model: body.model ?? null,
    parameters: body.parameters ?? null,
    created: now,
    updated: now,
  }
  const doc = JSON.stringify(app)
  const parameters = app.parameters === null ? null : JSON.stringify(app.parameters)
  const row = [
    WORKSPACE,
    id,
    app.name,
    app.description,
    app.provider,
    app.model,
    parameters,
    etag,
    now,
    now,
    doc,
  ]
  if (queue.length === 0) setImmediate(flush)
  queue.push({ row, done: () => done(doc, etag) })
}

function readOne(id) {
  inSnapshot()
  return find.get(WORKSPACE, id)
}

function readPage() {
  inSnapshot()
  const docs = pageDocs.all(WORKSPACE, 0, 51)
  let last = null
  if (docs.length > 50) {
    docs.pop()
    last = pageLast.get(WORKSPACE, 0, 1, 49)
  }
  return `{"data":[${docs.join(',')}],"next_cursor":${last === null ? 'null' : `"${last}"`}}`
}

const JSON_TYPE = 'application/json; charset=utf-8'
const port = Number(process.env.PORT ?? 0)
let server

if (process.env.FLOOR_HTTP === 'fastify') {
  const app = Fastify({ logger: false })
  app.post('/v1/applications', (request, reply) => {
    create(request.body, (doc, etag) => {
      reply.code(201).header('content-type', JSON_TYPE).header('etag', `"${etag}"`).send(doc)
    })
  })
  app.get('/v1/applications/:id', (request, reply) => {
    const found = readOne(request.params.id)
    if (found) reply.header('content-type', JSON_TYPE).header('etag', `"${found.etag}"`).send(found.doc)
    else reply.code(404).header('content-type', JSON_TYPE).send('{}')
  })
  app.get('/v1/applications', (_request, reply) => {
    reply.header('content-type', JSON_TYPE).send(readPage())
  })
  await app.listen({ port, host: '127.0.0.1' })
  server = app.server
} else {
  const answer = (res, status, doc, etag) => {
    res.writeHead(status, {
      'content-type': JSON_TYPE,
      'content-length': Buffer.byteLength(doc),
      ...(etag ? { etag: `"${etag}"` } : {}),
    })
    res.end(doc)
  }
  server = createServer((req, res) => {
    const chunks = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      if (req.method === 'POST') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        create(body, (doc, etag) => answer(res, 201, doc, etag))
        return
      }
      const path = req.url.split('?')[0]
      if (path === '/v1/applications') return answer(res, 200, readPage())
      const found = readOne(decodeURIComponent(path.slice(path.lastIndexOf('/') + 1)))
      if (found) answer(res, 200, found.doc, found.etag)
      else answer(res, 404, '{}')
    })
  })
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve))
}
process.stdout.write(`listening on ${server.address().port}\n`)
process.on('SIGTERM', () =>
  server.close(() => {
    reader.close()
    db.close()
    rmSync(dir, { recursive: true, force: true })
    process.exit(0)
  }),
)

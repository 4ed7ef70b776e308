// The store's share of the limit: a bare node:http server doing the durable work of a create and
// the read of a get the way Warden does it on SQLite, and nothing else. No framework, no
// validation, no auth, no rate limit, no logging.
//
//   POST /v1/applications      parses the body and inserts one row of Warden's shape; writes that
//                              arrive together share one commit (WAL, synchronous=FULL), each in
//                              its own savepoint; 201 once the commit is on disk.
//   GET  /v1/applications/:id  one row by (workspace, id) on a read-only connection.
//
// Comparing Warden with this server in the same run separates what the disk and SQLite cost from
// what Warden's HTTP layer costs.
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'

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
  for (const write of batch) write.done()
}

function answer(res, status, doc, etag) {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(doc),
    etag: `"${etag}"`,
  })
  res.end(doc)
}

const server = createServer((req, res) => {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    if (req.method === 'POST') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      const id = body.id ?? randomUUID()
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
      queue.push({ row, done: () => answer(res, 201, doc, etag) })
      return
    }
    const found = find.get(WORKSPACE, decodeURIComponent(req.url.slice(req.url.lastIndexOf('/') + 1)))
    if (found) answer(res, 200, found.doc, found.etag)
    else answer(res, 404, '{}', '')
  })
})
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening on ${server.address().port}\n`)
})
process.on('SIGTERM', () =>
  server.close(() => {
    reader.close()
    db.close()
    rmSync(dir, { recursive: true, force: true })
    process.exit(0)
  }),
)

import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createServices } from '../../src/services/index.js'
import { prepareStore } from '../../src/services/store-setup.js'
import { ImportError, TransferService } from '../../src/services/transfer.service.js'
import { openStore, type Store } from '../../src/store/database.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { runCli } from '../helpers/process.js'
import { freshStoreConfig, STORE_KINDS, type StoreKind, type TestStoreConfig } from '../helpers/stores.js'

async function exportLines(store: Store): Promise<string[]> {
  const lines: string[] = []
  await new TransferService(store).export((line) => {
    lines.push(line)
  })
  // The header carries the export time; everything after it must match exactly.
  return lines.slice(1)
}

async function* iterate(lines: string[]) {
  yield JSON.stringify({ kind: 'header', format: 'warden-export', version: 1, exported: 0 })
  for (const line of lines) yield line
}

describe('warden export and import', () => {
  let source: TestApp
  const dropped: TestStoreConfig[] = []
  const opened: Store[] = []
  let readerKey: string

  beforeAll(async () => {
    source = await createTestApp('sqlite')
    const admin = source.adminKey
    const req = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, key = admin) =>
      source.request({ method, url, payload, key })
    for (let i = 0; i < 12; i++) {
      await req('POST', '/v1/applications', {
        id: `app-${i}`,
        name: `App ${i} ✓`,
        description: 'línea\nnueva',
        provider: i % 2 ? 'openai' : null,
        parameters: i % 3 ? { temperature: 0.1 * i, max_tokens: 100 + i } : null,
      })
    }
    await req('POST', '/v1/applications/app-1/policies', {
      id: 'pii',
      rules: [
        { type: 'pii', flagged: ['email'] },
        { type: 'regex', value: '\\d{4}' },
      ],
      target: ['output'],
      override_response: 'no',
    })
    await req('PATCH', '/v1/applications/app-1/policies/pii', { target: ['input', 'output'] })
    await req('PATCH', '/v1/applications/app-1/policies/pii', { definition: 'Guard it.' })
    await req('POST', '/v1/applications/app-2/policies', {
      id: 'len',
      rules: [{ type: 'length', value: '500' }],
      target: ['output'],
    })
    await req('DELETE', '/v1/applications/app-5')
    const revoked = (await req('POST', '/v1/api-keys', { name: 'old', scopes: ['admin'] })).json()
    await req('DELETE', `/v1/api-keys/${revoked.id}`)
    readerKey = await source.key(['applications:read', 'policies:read'], { workspace: 'second' })
    await source.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'app-0', name: 'Other', description: '' },
      key: await source.key(['admin'], { workspace: 'second' }),
    })
  })
  afterAll(async () => {
    for (const store of opened) await store.close()
    for (const d of dropped) await d.drop()
    await source.close()
  })

  async function emptyStore(kind: StoreKind) {
    const fresh = await freshStoreConfig(kind)
    dropped.push(fresh)
    const store = openStore(fresh.config)
    opened.push(store)
    await prepareStore(store)
    return { store, fresh }
  }

  /** What a client sees of a store, through the API. */
  async function answers(store: Store, keys: string[]) {
    const app = await buildApp({
      config: loadConfig({ RATE_LIMIT_PER_MINUTE: '0' }),
      store,
      services: createServices({ store, config: loadConfig({}) }),
    })
    const urls = [
      '/v1/applications?limit=200',
      '/v1/applications?limit=5',
      '/v1/applications/app-1',
      '/v1/applications/app-1/policies',
      '/v1/applications/app-1/policies/pii',
      '/v1/applications/app-1/policies/pii/revisions',
      '/v1/applications/app-1/policies/pii/revisions/2',
      '/v1/applications/app-5',
      '/v1/api-keys',
    ]
    const out: unknown[] = []
    for (const key of keys) {
      for (const url of urls) {
        const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } })
        const body = res.json()
        if (body.request_id) body.request_id = 'x'
        out.push([url, res.statusCode, res.headers.etag ?? null, body])
      }
    }
    await app.close()
    return out
  }

  it('round-trips every record exactly, through every store kind, and serves identical answers', async () => {
    const original = await exportLines(source.store)
    const kinds = original.map((l) => JSON.parse(l).kind)
    expect(new Set(kinds)).toEqual(
      new Set(['workspace', 'api_key', 'application', 'policy', 'policy_revision']),
    )
    expect(original.join('\n')).not.toMatch(/wdn_[A-Za-z0-9_-]{43}/)
    const before = await answers(source.store, [source.adminKey, readerKey])

    // SQLite → every other kind → SQLite again.
    const path = [...STORE_KINDS.filter((k) => k !== 'sqlite'), 'sqlite'] as StoreKind[]
    let lines = original
    for (const kind of path) {
      const { store } = await emptyStore(kind)
      await new TransferService(store).import(iterate(lines))
      lines = await exportLines(store)
      expect(lines, `after ${kind}`).toEqual(original)
      expect(await answers(store, [source.adminKey, readerKey]), `answers on ${kind}`).toEqual(before)
    }
  })

  it('refuses to import into a store that is not empty, and writes nothing', async () => {
    const { store } = await emptyStore('sqlite')
    await createServices({ store, config: loadConfig({}) }).operator.bootstrap(null)
    const lines = await exportLines(source.store)
    await expect(new TransferService(store).import(iterate(lines))).rejects.toThrow(ImportError)
    const apps = await store.db.selectFrom('applications').select('id').execute()
    expect(apps).toEqual([])
  })

  it('rolls back everything when a line is bad', async () => {
    const { store } = await emptyStore('sqlite')
    const lines = [...(await exportLines(source.store)), '{not json']
    await expect(new TransferService(store).import(iterate(lines))).rejects.toThrow(/is not JSON/)
    expect(await store.db.selectFrom('workspaces').select('id').execute()).toEqual([])
  })

  it('moves a store with the CLI: export to a file, import from it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-export-'))
    const file = join(dir, 'dump.jsonl')
    const from = await freshStoreConfig('sqlite')
    dropped.push(from)
    expect(runCli(['workspaces', 'create', 'moving'], from.env).status).toBe(0)
    const exported = runCli(['export', '--output', file], from.env)
    expect(exported.status, exported.stderr).toBe(0)
    expect(exported.stderr).toMatch(
      /^exported 1 workspace, 0 api keys, 0 applications, 0 policies, 0 policy revisions/,
    )
    const to = await freshStoreConfig(STORE_KINDS.includes('postgres') ? 'postgres' : 'sqlite')
    dropped.push(to)
    const imported = runCli(['import', '--input', file], to.env)
    expect(imported.status, imported.stderr).toBe(0)
    expect(imported.stderr).toMatch(/^imported 1 workspace/)
    const again = runCli(['import', '--input', file], to.env)
    expect(again.status).toBe(1)
    expect(again.stderr).toMatch(/^warden: import failed, nothing was written: the target store is not empty/)
    expect(readFileSync(file, 'utf8').split('\n')[0]).toContain('"format":"warden-export"')
  })
})

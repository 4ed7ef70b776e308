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

async function exportLines(store: Store, evaluationLog = true): Promise<string[]> {
  const lines: string[] = []
  await new TransferService(store).export((line) => void lines.push(line), { evaluationLog })
  // The header carries the export time; everything after it must match exactly.
  return lines.slice(1)
}

async function* iterate(lines: string[]) {
  yield JSON.stringify({ kind: 'header', format: 'warden-export', version: 1, exported: 0 })
  for (const line of lines) yield line
}

describe('warden export and import carry the evaluation log', () => {
  let source: TestApp
  const dropped: TestStoreConfig[] = []
  const opened: Store[] = []
  let entries = 0

  beforeAll(async () => {
    source = await createTestApp('sqlite')
    const req = (method: 'POST' | 'DELETE', url: string, payload?: object) =>
      source.request({ method, url, ...(payload ? { payload } : {}) })
    for (const id of ['bot', 'gone', 'quiet'])
      await req('POST', '/v1/applications', { id, name: id, description: '' })
    await req('POST', '/v1/applications/bot/policies', {
      id: 'no-pii',
      rules: [{ type: 'pii' }, { type: 'keywords', flagged: ['refund guarantee'] }],
      target: ['input', 'output'],
    })
    for (let i = 0; i < 30; i++) {
      const res = await req('POST', `/v1/applications/${i % 7 === 3 ? 'gone' : 'bot'}/evaluations`, {
        messages: [{ role: 'user', content: i % 2 ? `mail me at jo${i}@example.com ✓` : `hello ${i}` }],
        draft_policies:
          i % 5 ? null : [{ id: 'draft', rules: [{ type: 'length', value: '5' }], target: ['input'] }],
      })
      expect(res.statusCode, res.body).toBe(200)
      if (i % 7 !== 3) entries++
    }
    // An application deleted keeps its entries until retention; an export leaves them out.
    await req('DELETE', '/v1/applications/gone')
    // Another workspace's application of the same id.
    const other = await source.key(['admin'], { workspace: 'second' })
    await source.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'bot', name: 'Other', description: '' },
      key: other,
    })
    await source.request({
      method: 'POST',
      url: '/v1/applications/bot/evaluations',
      payload: { messages: [{ role: 'user', content: 'from the second workspace' }] },
      key: other,
    })
    entries++
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
    return store
  }

  /** What a client sees of the log, through the API. */
  async function answers(store: Store) {
    const config = loadConfig({ RATE_LIMIT_PER_MINUTE: '0' })
    const app = await buildApp({ config, store, services: createServices({ store, config }) })
    const first = (
      await app.inject({
        method: 'GET',
        url: '/v1/applications/bot/evaluations?limit=1',
        headers: { authorization: `Bearer ${source.adminKey}` },
      })
    ).json().data[0].id
    const urls = [
      '/v1/applications/bot/evaluations?limit=200',
      '/v1/applications/bot/evaluations?limit=4',
      '/v1/applications/bot/evaluations?policy_id=draft',
      '/v1/applications/bot/evaluations?verdict=fail&policy_id=no-pii',
      `/v1/applications/bot/evaluations/${first}`,
      '/v1/applications/quiet/evaluations',
    ]
    const out: unknown[] = []
    const get = (url: string) =>
      app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${source.adminKey}` } })
    for (const url of urls) {
      const res = await get(url)
      // A cursor is a position in this store (sequences are renumbered by an import): what it
      // leads to must be the same, not its text.
      const cursor = res.statusCode === 200 ? (res.json().next_cursor as string | null | undefined) : null
      const anyCursor = (text: string) => text.replace(/"next_cursor":"[^"]+"/, '"next_cursor":"…"')
      const body = anyCursor(res.body)
      const next = cursor ? anyCursor((await get(`${url}&cursor=${cursor}`)).body) : null
      out.push([url, res.statusCode, res.headers.etag ?? null, body, next])
    }
    await app.close()
    return out
  }

  it('round-trips every entry exactly, through every store kind, listed and filtered the same', async () => {
    const original = await exportLines(source.store)
    const logLines = original.filter((l) => JSON.parse(l).kind === 'evaluation')
    expect(logLines).toHaveLength(entries)
    // After every other record: an entry's application is always imported before it.
    expect(original.slice(-entries)).toEqual(logLines)
    // Redacted as stored: the e-mail addresses never were in the log.
    expect(logLines.join('\n')).not.toMatch(/@example\.com/)
    const before = await answers(source.store)
    expect((JSON.parse(String((before[0] as unknown[])[3])) as { data: unknown[] }).data).toHaveLength(
      entries - 1,
    )

    const path = [...STORE_KINDS.filter((k) => k !== 'sqlite'), 'sqlite'] as StoreKind[]
    let lines = original
    for (const kind of path) {
      const store = await emptyStore(kind)
      const counts = await new TransferService(store).import(iterate(lines))
      expect(counts.evaluation).toBe(entries)
      lines = await exportLines(store)
      expect(lines, `after ${kind}`).toEqual(original)
      expect(await answers(store), `answers on ${kind}`).toEqual(before)
    }
  })

  it('leaves the log out when asked, on export or on import', async () => {
    const without = await exportLines(source.store, false)
    expect(without.some((l) => JSON.parse(l).kind === 'evaluation')).toBe(false)
    const all = await exportLines(source.store)
    expect(without).toEqual(all.filter((l) => JSON.parse(l).kind !== 'evaluation'))

    const store = await emptyStore('sqlite')
    const counts = await new TransferService(store).import(iterate(all), { evaluationLog: false })
    expect(counts).not.toHaveProperty('evaluation')
    expect(await store.db.selectFrom('evaluations').select('id').execute()).toEqual([])
    expect(await store.db.selectFrom('applications').select('id').execute()).toHaveLength(3)
  })

  it('refuses, and writes nothing, for an entry of an application the export does not hold', async () => {
    const store = await emptyStore('sqlite')
    const lines = await exportLines(source.store)
    const orphan = JSON.stringify({ ...JSON.parse(lines[lines.length - 1] ?? ''), application_id: 'nowhere' })
    await expect(new TransferService(store).import(iterate([...lines, orphan]))).rejects.toThrow(
      /line \d+ is an evaluation of application "nowhere"/,
    )
    const malformed = JSON.stringify({
      kind: 'evaluation',
      workspace_id: 'w',
      application_id: 'bot',
      entry: {},
    })
    await expect(new TransferService(store).import(iterate([...lines, malformed]))).rejects.toThrow(
      ImportError,
    )
    expect(await store.db.selectFrom('evaluations').select('id').execute()).toEqual([])
    expect(await store.db.selectFrom('workspaces').select('id').execute()).toEqual([])
  })

  it('moves the log with the CLI, or not with --skip-evaluation-log', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-export-'))
    const from = await freshStoreConfig('sqlite')
    dropped.push(from)
    const store = openStore(from.config)
    opened.push(store)
    await prepareStore(store)
    await new TransferService(store).import(iterate(await exportLines(source.store)))

    const file = join(dir, 'all.jsonl')
    const exported = runCli(['export', '--output', file], from.env)
    expect(exported.status, exported.stderr).toBe(0)
    expect(exported.stderr).toMatch(new RegExp(`, ${entries} evaluation log entries\n$`))
    const skipped = join(dir, 'no-log.jsonl')
    const without = runCli(['export', '--skip-evaluation-log', '--output', skipped], from.env)
    expect(without.status, without.stderr).toBe(0)
    expect(without.stderr).not.toMatch(/evaluation/)
    expect(readFileSync(skipped, 'utf8')).not.toMatch(/"kind":"evaluation"/)

    const to = await freshStoreConfig(STORE_KINDS.includes('postgres') ? 'postgres' : 'sqlite')
    dropped.push(to)
    const imported = runCli(['import', '--skip-evaluation-log', '--input', file], to.env)
    expect(imported.status, imported.stderr).toBe(0)
    expect(imported.stderr).not.toMatch(/evaluation/)
    const again = await freshStoreConfig('sqlite')
    dropped.push(again)
    const full = runCli(['import', '--input', file], again.env)
    expect(full.status, full.stderr).toBe(0)
    expect(full.stderr).toMatch(new RegExp(`, ${entries} evaluation log entries\n$`))
  })
})

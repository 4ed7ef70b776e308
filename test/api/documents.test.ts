import { afterAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createServices } from '../../src/services/index.js'
import { prepareStore } from '../../src/services/store-setup.js'
import { insertApplication } from '../../src/store/applications.repository.js'
import { openStore } from '../../src/store/database.js'
import { allMigrations } from '../../src/store/migrations/index.js'
import { migrateTo } from '../../src/store/migrator.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { freshStoreConfig, STORE_KINDS, type TestStoreConfig } from '../helpers/stores.js'

// Reads send the JSON text stored with each record (store/documents.ts).
describe.each(STORE_KINDS)('stored documents (%s)', (kind) => {
  const dropped: TestStoreConfig[] = []
  afterAll(async () => {
    for (const fresh of dropped) await fresh.drop()
  })

  it('are written for the records of a store made before they existed, when it is migrated', async () => {
    const fresh = await freshStoreConfig(kind)
    dropped.push(fresh)
    const old = openStore(fresh.config)
    expect(await migrateTo(old, '0002_idempotency_keys')).toEqual(['0001_initial', '0002_idempotency_keys'])
    // Rows as the previous version wrote them: no `doc`, JSON keys in the client's order.
    const db = old.db.withTables<{
      applications: Record<string, unknown>
      policies: Record<string, unknown>
    }>()
    await old.db.insertInto('workspaces').values({ id: 'ws-1', name: 'default', created: 1 }).execute()
    await db
      .insertInto('applications')
      .values({
        workspace_id: 'ws-1',
        id: 'legacy',
        name: 'Legacy "bot"',
        description: 'From before',
        provider: null,
        model: 'm',
        parameters: JSON.stringify({
          top_k: 3,
          system_prompt: 'Be brief.',
          temperature: 0.5,
          max_tokens: null,
          top_p: null,
        }),
        etag: 'e1',
        created: 100,
        updated: 200,
      })
      .execute()
    await db
      .insertInto('policies')
      .values({
        workspace_id: 'ws-1',
        application_id: 'legacy',
        id: 'p',
        rules: JSON.stringify([
          { flagged: null, threshold: 0.7, value: null, expected: 'pass', type: 'factuality' },
        ]),
        target: JSON.stringify(['output']),
        definition: 'Stay grounded.',
        override_response: null,
        revision: 3,
        etag: 'e2',
        created: 100,
        updated: 300,
      })
      .execute()
    // Revision rows as the previous versions wrote them: every version, the current one too.
    for (const [revision, definition, created] of [
      [1, 'First.', 100],
      [2, 'Second.', 200],
      [3, 'Stay grounded.', 300],
    ] as const) {
      await old.db
        .insertInto('policy_revisions')
        .values({
          workspace_id: 'ws-1',
          application_id: 'legacy',
          policy_id: 'p',
          revision,
          rules: JSON.stringify([
            { type: 'factuality', expected: 'pass', value: null, threshold: 0.7, flagged: null },
          ]),
          target: JSON.stringify(['output']),
          definition,
          override_response: null,
          created,
        })
        .execute()
    }
    await old.close()

    const store = openStore(fresh.config)
    // Every migration after the two the old store had, then its two records rendered.
    expect(await prepareStore(store)).toEqual({
      migrations: Object.keys(allMigrations(kind)).slice(2),
      documents: 2,
    })
    const config = { ...loadConfig({}), store: fresh.config }
    const services = createServices({ store, config })
    const app = await buildApp({ config, store, services })
    try {
      const { secret } = await services.operator.createKey({
        workspaceId: 'ws-1',
        name: null,
        scopes: ['admin'],
        expiresAt: null,
      })
      const get = (url: string) => app.inject({ url, headers: { authorization: `Bearer ${secret}` } })
      const application =
        '{"id":"legacy","name":"Legacy \\"bot\\"","description":"From before","provider":null,"model":"m","parameters":{"system_prompt":"Be brief.","temperature":0.5,"max_tokens":null,"top_p":null,"top_k":3},"created":100,"updated":200}'
      const policy =
        '{"id":"p","application_id":"legacy","rules":[{"type":"factuality","expected":"pass","value":null,"threshold":0.7,"flagged":null}],"target":["output"],"definition":"Stay grounded.","override_response":null,"mode":"enforce","on_error":"fail_closed","revision":3,"created":100,"updated":300}'
      const one = await get('/v1/applications/legacy')
      expect(one.statusCode).toBe(200)
      expect(one.headers.etag).toBe('"e1"')
      expect(one.body).toBe(application)
      expect((await get('/v1/applications')).body).toBe(`{"data":[${application}],"next_cursor":null}`)
      expect((await get('/v1/applications/legacy/policies/p')).body).toBe(policy)
      expect((await get('/v1/applications/legacy/policies')).body).toBe(
        `{"data":[${policy}],"next_cursor":null}`,
      )
      // The current version now lives in the policy row only; the history reads the same.
      const stored = await store.db
        .selectFrom('policy_revisions')
        .select('revision')
        .orderBy('revision')
        .execute()
      expect(stored.map((r) => r.revision)).toEqual([1, 2])
      const history = (await get('/v1/applications/legacy/policies/p/revisions')).json()
      expect(
        history.data.map((p: { revision: number; definition: string; updated: number }) => [
          p.revision,
          p.definition,
          p.updated,
        ]),
      ).toEqual([
        [3, 'Stay grounded.', 300],
        [2, 'Second.', 200],
        [1, 'First.', 100],
      ])
      expect((await get('/v1/applications/legacy/policies/p/revisions/3')).json()).toEqual(JSON.parse(policy))
    } finally {
      await app.close()
      await store.close()
    }
  })

  it('are rendered again at start-up when their version changed, and only then', async () => {
    const fresh = await freshStoreConfig(kind)
    dropped.push(fresh)
    const first = openStore(fresh.config)
    expect((await prepareStore(first)).documents).toBe(0)
    const config = { ...loadConfig({}), store: fresh.config }
    const services = createServices({ store: first, config })
    const app = await buildApp({ config, store: first, services })
    const workspace = await services.operator.createWorkspace('docs')
    const { secret } = await services.operator.createKey({
      workspaceId: workspace.id,
      name: null,
      scopes: ['admin'],
      expiresAt: null,
    })
    const headers = { authorization: `Bearer ${secret}` }
    for (const id of ['a', 'b', 'c']) {
      const created = await app.inject({
        method: 'POST',
        url: '/v1/applications',
        headers,
        payload: { id, name: id, description: '' },
      })
      expect(created.statusCode).toBe(201)
    }
    const expected = (await app.inject({ url: '/v1/applications/b', headers })).body
    await app.close()
    // As an older version would have left them: texts of another shape, under an older version.
    await first.db.updateTable('applications').set({ doc: '{"stale":true}' }).execute()
    await first.db
      .updateTable('store_metadata')
      .set({ value: '0' })
      .where('name', '=', 'document_version')
      .execute()
    await first.close()

    const store = openStore(fresh.config)
    try {
      expect(await prepareStore(store)).toEqual({ migrations: [], documents: 3 })
      const rows = await store.db.selectFrom('applications').select(['id', 'doc']).orderBy('seq').execute()
      expect(rows.find((row) => row.id === 'b')?.doc).toBe(expected)
      expect(rows.every((row) => !row.doc?.includes('stale'))).toBe(true)
      // The version is recorded: the next start-up renders nothing.
      expect(await prepareStore(store)).toEqual({ migrations: [], documents: 0 })
    } finally {
      await store.close()
    }
  })

  describe('reads', () => {
    let t: TestApp
    afterAll(async () => t?.close())

    it('never see a write whose commit has not happened', async () => {
      t = await createTestApp(kind)
      const seen = await t.store.write(async (tx) => {
        await insertApplication(tx.statements, {
          workspace_id: t.workspaceId,
          id: 'uncommitted',
          name: 'n',
          description: 'd',
          provider: null,
          model: null,
          parameters: null,
          etag: 'e',
          created: 1,
          updated: 1,
          doc: '{}',
        })
        // Read outside the transaction, as a request would, while it is still open.
        return t.request({ method: 'GET', url: '/v1/applications/uncommitted' })
      })
      expect(seen.statusCode).toBe(404)
      const after = await t.request({ method: 'GET', url: '/v1/applications/uncommitted' })
      expect(after.statusCode).toBe(200)
    })

    it('send the same bytes a write answered with, after a create and after a patch', async () => {
      const created = await t.request({
        method: 'POST',
        url: '/v1/applications',
        payload: {
          model: 'gpt-4o',
          name: 'Order',
          description: 'keys in any order',
          parameters: { top_p: 0.9, temperature: 0 },
        },
      })
      expect(created.statusCode).toBe(201)
      const id = created.json().id
      const read = await t.request({ method: 'GET', url: `/v1/applications/${id}` })
      expect(read.body).toBe(created.body)
      expect(read.headers.etag).toBe(created.headers.etag)
      expect(read.headers['content-type']).toBe('application/json; charset=utf-8')
      const patched = await t.request({
        method: 'PATCH',
        url: `/v1/applications/${id}`,
        payload: { parameters: { top_k: 5 } },
      })
      expect(patched.statusCode).toBe(200)
      expect(patched.json().parameters).toEqual({
        system_prompt: null,
        temperature: 0,
        max_tokens: null,
        top_p: 0.9,
        top_k: 5,
      })
      expect((await t.request({ method: 'GET', url: `/v1/applications/${id}` })).body).toBe(patched.body)
      const list = await t.request({ method: 'GET', url: '/v1/applications' })
      expect(list.body).toContain(patched.body)
    })
  })
})

import SQLite from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { prepareStore } from '../../src/services/store-setup.js'
import { findApplicationDocument, insertApplication } from '../../src/store/applications.repository.js'
import { openStore, type Store, withTurnSnapshots } from '../../src/store/database.js'
import type { NewApplication } from '../../src/store/tables.js'
import { freshStoreConfig, type TestStoreConfig } from '../helpers/stores.js'
import { nextTurn } from '../helpers/turns.js'

const row = (id: string): NewApplication => ({
  workspace_id: 'ws',
  id,
  name: 'n',
  description: 'd',
  provider: null,
  model: null,
  parameters: null,
  etag: `e-${id}`,
  created: 1,
  updated: 1,
  doc: `{"id":"${id}"}`,
})

// On SQLite, hot reads that arrive in the same turn of the event loop share one read transaction
// (store/database.ts, withTurnSnapshots).
describe('SQLite reads within one turn of the event loop', () => {
  let fresh: TestStoreConfig
  let store: Store
  /** A second connection to the same file, as another process would open it. */
  const connect = () => {
    if (fresh.config.kind !== 'sqlite') throw new Error('a SQLite store was expected')
    return new SQLite(fresh.config.path)
  }
  beforeAll(async () => {
    fresh = await freshStoreConfig('sqlite')
    store = openStore(fresh.config)
    await prepareStore(store)
    await store.db.insertInto('workspaces').values({ id: 'ws', name: 'default', created: 1 }).execute()
  })
  afterAll(async () => {
    await store.close()
    await fresh.drop()
  })

  it('see every write this process made before them', async () => {
    await nextTurn()
    const find = (id: string) => findApplicationDocument(store.statements, 'ws', id)
    expect(await find('same-turn')).toBeUndefined()
    // Not through the group commit: a write committed on its own.
    await insertApplication(store.statements, row('same-turn'))
    expect(await find('same-turn')).toEqual({ etag: 'e-same-turn', doc: '{"id":"same-turn"}' })
    await store.writeOne((tx) => insertApplication(tx.statements, row('grouped')))
    expect(await find('grouped')).toEqual({ etag: 'e-grouped', doc: '{"id":"grouped"}' })
  })

  it('take a new snapshot within the turn as soon as the writer has committed', async () => {
    await nextTurn()
    if (fresh.config.kind !== 'sqlite') throw new Error('a SQLite store was expected')
    let commits = 0
    const reader = withTurnSnapshots(new SQLite(fresh.config.path, { readonly: true }), () => commits)
    const other = connect()
    try {
      const read = () => reader.direct.first('select id from applications where id = ?', ['moved'])
      expect(read()).toBeUndefined()
      other
        .prepare(
          `insert into applications (workspace_id, id, name, description, etag, created, updated, doc)
           values ('ws', 'moved', 'n', 'd', 'e', 1, 1, '{}')`,
        )
        .run()
      // The same turn, and no commit of this process's writer: the snapshot stays.
      expect(read()).toBeUndefined()
      commits++
      expect(read()).toEqual({ id: 'moved' })
    } finally {
      reader.close()
      other.close()
    }
  })

  it('see a commit made by another process from the next turn on', async () => {
    await nextTurn()
    const other = connect()
    try {
      const find = () => findApplicationDocument(store.statements, 'ws', 'elsewhere')
      expect(await find()).toBeUndefined()
      other
        .prepare(
          `insert into applications (workspace_id, id, name, description, etag, created, updated, doc)
           values ('ws', 'elsewhere', 'n', 'd', 'e', 1, 1, '{}')`,
        )
        .run()
      // Same turn: the read shares the snapshot the first one took.
      expect(await find()).toBeUndefined()
      await nextTurn()
      expect(await find()).toEqual({ etag: 'e', doc: '{}' })
    } finally {
      other.close()
    }
  })

  it('never hold the read transaction past the turn, so the WAL can be checkpointed in full', async () => {
    await findApplicationDocument(store.statements, 'ws', 'grouped')
    await nextTurn()
    await nextTurn()
    const checkpoint = connect()
    try {
      // The store's checkpointer thread checkpoints too (50 ms after the last commit): while it
      // holds the checkpoint lock, this one is busy. Tried again each turn, it completes once
      // that one has; a read transaction held past its turn would keep it busy until the test's
      // timeout.
      const truncate = () => (checkpoint.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[])[0]?.busy
      while (truncate() !== 0) await nextTurn()
      expect(checkpoint.pragma('wal_checkpoint(TRUNCATE)')).toMatchObject([{ busy: 0, log: 0 }])
    } finally {
      checkpoint.close()
    }
  })
})

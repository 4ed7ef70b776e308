import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findApplication } from '../../src/store/applications.repository.js'
import { StoreUnavailableError } from '../../src/store/errors.js'
import { createTestApp, type TestApp } from '../helpers/app.js'

const url = process.env.TEST_DATABASE_URL

/** Runs one statement on a connection of its own, as another instance or an operator would. */
async function elsewhere(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

// On PostgreSQL the store's prepared queries run as named statements (pg-named-statements.ts):
// parsed once per connection, planned once PostgreSQL settles on a generic plan. Each store
// here has one connection, so that the statements it prepared are the ones its requests used.
describe.skipIf(!url)('PostgreSQL named statements', () => {
  let t: TestApp
  let schema: string
  const get = async (path: string, expected = 200) => {
    const res = await t.request({ method: 'GET', url: path })
    expect(res.statusCode, res.body).toBe(expected)
    return res.json()
  }
  const prepared = async (app: TestApp) => {
    const { rows } = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(
      app.store.db,
    )
    return rows.map((row) => row.name)
  }
  const backend = async () => {
    const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(t.store.db)
    return rows[0]?.pid
  }

  beforeAll(async () => {
    t = await createTestApp('postgres', {}, { poolSize: 1 })
    if (t.config.store.kind !== 'postgres' || !t.config.store.schema) throw new Error('a schema was expected')
    schema = t.config.store.schema
    const created = await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'bot', name: 'Bot', description: '' },
    })
    expect(created.statusCode, created.body).toBe(201)
    const policy = await t.request({
      method: 'POST',
      url: '/v1/applications/bot/policies',
      payload: { id: 'no-pii', rules: [{ type: 'pii', flagged: ['email'] }], target: ['input'] },
    })
    expect(policy.statusCode, policy.body).toBe(201)
  })
  afterAll(async () => t.close())

  it('serve the key lookup, point reads, list pages and the evaluation', async () => {
    await get('/v1/applications/bot')
    await get('/v1/applications')
    await get('/v1/applications/bot/policies/no-pii')
    await get('/v1/applications/bot/policies')
    for (const policies of [undefined, ['no-pii']]) {
      const res = await t.request({
        method: 'POST',
        url: '/v1/applications/bot/evaluations',
        payload: { messages: [{ role: 'user', content: 'hello' }], ...(policies ? { policies } : {}) },
      })
      expect(res.statusCode, res.body).toBe(200)
      await get(`/v1/applications/bot/evaluations/${res.json().id}`)
    }
    expect(await prepared(t)).toEqual(
      expect.arrayContaining([
        'findApiKeyByHash',
        'findApplicationDocument',
        'listApplicationDocuments',
        // applicationExists reads the application's sequence: the same statement.
        'findApplicationSeq',
        'findPolicyDocument',
        'listPolicyDocuments',
        'findEvaluatedApplication',
        'findPolicy',
        'findEvaluationDocument',
        'insertEvaluation',
        'insertEvaluationPolicy',
      ]),
    )
  })

  it('read the schema of their own store, when another store in the process prepared the same', async () => {
    const other = await createTestApp('postgres', {}, { poolSize: 1 })
    try {
      const res = await other.request({
        method: 'POST',
        url: '/v1/applications',
        payload: { id: 'bot', name: 'Other bot', description: '' },
      })
      expect(res.statusCode, res.body).toBe(201)
      for (let i = 0; i < 6; i++) {
        expect((await get('/v1/applications/bot')).name).toBe('Bot')
        const mine = await other.request({ method: 'GET', url: '/v1/applications/bot' })
        expect(mine.json().name).toBe('Other bot')
      }
      expect(await prepared(other)).toContain('findApplicationDocument')
    } finally {
      await other.close()
    }
  })

  it('run again, unnamed, on a new connection when another instance added a column to a table read', async () => {
    const find = () => findApplication(t.store.statements, t.workspaceId, 'bot')
    await find()
    const before = await backend()
    await elsewhere(`alter table ${schema}.applications add column added_later text`)
    expect(await find()).toMatchObject({ id: 'bot', added_later: null })
    expect(await backend()).not.toBe(before)

    // Inside a transaction, the error has aborted it: the request is to be retried.
    await find()
    await elsewhere(`alter table ${schema}.applications add column added_later_still text`)
    await expect(
      t.store.write((tx) => findApplication(tx.statements, t.workspaceId, 'bot')),
    ).rejects.toBeInstanceOf(StoreUnavailableError)
    expect(await find()).toMatchObject({ id: 'bot', added_later_still: null })
  })

  it('raise the store’s outage error for a statement that times out', async () => {
    await findApplication(t.store.statements, t.workspaceId, 'bot')
    await sql`set statement_timeout = 200`.execute(t.store.db)
    const locker = new pg.Client({ connectionString: url })
    await locker.connect()
    try {
      await locker.query('begin')
      await locker.query(`lock table ${schema}.applications in access exclusive mode`)
      await expect(findApplication(t.store.statements, t.workspaceId, 'bot')).rejects.toBeInstanceOf(
        StoreUnavailableError,
      )
    } finally {
      await locker.query('rollback')
      await locker.end()
      await sql`reset statement_timeout`.execute(t.store.db)
    }
    expect(await prepared(t)).toContain('findApplication')
  })
})

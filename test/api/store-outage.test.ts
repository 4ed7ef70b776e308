import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../src/store/errors.js'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'

// 503 means the store is out of reach, and nothing else: only the store raises
// StoreUnavailableError, and the HTTP layer matches no driver error codes of its own.
describe.each(STORE_KINDS)('store outages (%s)', (kind) => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp(kind)
  })
  afterAll(async () => t.close())

  it('answer 503 with Retry-After when the store raises its outage error', async () => {
    const get = t.services.applications.get
    t.services.applications.get = async () => {
      throw new StoreUnavailableError(
        Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      )
    }
    try {
      const res = await t.request({ method: 'GET', url: '/v1/applications/any' })
      problem(res, 503, 'unavailable')
      expect(res.headers['retry-after']).toBe('2')
      expect(res.body).not.toMatch(/ECONNREFUSED/)
    } finally {
      t.services.applications.get = get
    }
  })

  it('a network error from some other client is a 500, never a store outage', async () => {
    const get = t.services.applications.get
    t.services.applications.get = async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:11434'), { code: 'ECONNREFUSED' })
    }
    try {
      const res = await t.request({ method: 'GET', url: '/v1/applications/any' })
      problem(res, 500, 'internal_error')
      expect(res.body).not.toMatch(/ECONNREFUSED|11434/)
    } finally {
      t.services.applications.get = get
    }
  })

  it('a statement the store rejects is not an outage', async () => {
    await expect(
      t.store.db
        .selectFrom('no_such_table' as never)
        .selectAll()
        .execute(),
    ).rejects.not.toBeInstanceOf(StoreUnavailableError)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'

// GET /healthz (the process is up) and GET /readyz (the store answers, else 503), open to all.
describe.each(STORE_KINDS)('operational endpoints (%s)', (kind) => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp(kind)
  })
  afterAll(async () => t.close())

  it.each([
    '/healthz',
    '/readyz',
  ])('%s answers 200 {"status":"ok"} as JSON, with a request id', async (url) => {
    const res = await t.request({ method: 'GET', url, key: null })
    expect(res.statusCode).toBe(200)
    expect(res.body).toBe('{"status":"ok"}')
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.headers['x-request-id']).toEqual(expect.any(String))
  })

  it('/readyz answers 503 problem+json with Retry-After once the store is gone, /healthz still 200', async () => {
    const gone = await createTestApp(kind)
    try {
      await gone.store.close()
      const ready = await gone.request({ method: 'GET', url: '/readyz', key: null })
      problem(ready, 503, 'unavailable')
      expect(Number(ready.headers['retry-after'])).toBeGreaterThan(0)
      expect((await gone.request({ method: 'GET', url: '/healthz', key: null })).statusCode).toBe(200)
    } finally {
      await gone.close()
    }
  })
})

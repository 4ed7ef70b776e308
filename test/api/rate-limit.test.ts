import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'

describe('rate limits', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp('sqlite', { RATE_LIMIT_PER_MINUTE: '5' })
  })
  afterAll(async () => {
    await t.close()
  })

  it('counts per key, and answers 429 problem+json with Retry-After and RateLimit-* headers', async () => {
    const key = await t.key(['admin'])
    const answers = []
    for (let i = 0; i < 6; i++) answers.push(await t.request({ method: 'GET', url: '/v1/applications', key }))
    expect(answers.slice(0, 5).map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200])
    expect(answers[0]?.headers['ratelimit-limit']).toBe('5')
    expect(answers[4]?.headers['ratelimit-remaining']).toBe('0')
    const limited = answers[5]
    if (!limited) throw new Error('no sixth answer')
    const body = problem(limited, 429, 'rate_limited')
    expect(body.type).toBe('/problems/rate-limited')
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect(limited.headers['ratelimit-limit']).toBe('5')
    expect(limited.headers['ratelimit-remaining']).toBe('0')
    expect(Number(limited.headers['ratelimit-reset'])).toBeGreaterThan(0)
    // Another key has its own budget.
    expect(
      (await t.request({ method: 'GET', url: '/v1/applications', key: await t.key(['admin']) })).statusCode,
    ).toBe(200)
  })

  it('does not limit the operational endpoints', async () => {
    for (const url of ['/healthz', '/readyz', '/openapi.json', '/docs/']) {
      for (let i = 0; i < 10; i++) {
        const answer = await t.request({ method: 'GET', url, key: null })
        expect(answer.statusCode, url).toBe(200)
        expect(answer.headers['ratelimit-limit'], url).toBeUndefined()
      }
    }
  })

  it('is off with RATE_LIMIT_PER_MINUTE=0', async () => {
    const open = await createTestApp('sqlite', { RATE_LIMIT_PER_MINUTE: '0' })
    try {
      for (let i = 0; i < 20; i++)
        expect((await open.request({ method: 'GET', url: '/v1/applications' })).statusCode).toBe(200)
      expect(
        (await open.request({ method: 'GET', url: '/v1/applications' })).headers['ratelimit-limit'],
      ).toBeUndefined()
    } finally {
      await open.close()
    }
  })
})

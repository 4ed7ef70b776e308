import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningServer, startServer } from '../helpers/process.js'
import { freshStoreConfig, type TestStoreConfig } from '../helpers/stores.js'

/**
 * Sends `head`, then one byte every 300 ms for as long as the connection is open: a client that
 * never finishes on its own. Resolves with what the server sent once the server has closed it (a
 * server that never does fails at the test's timeout).
 */
function dribble(port: number, head: string, drip: string): Promise<{ answer: string }> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1')
    let answer = ''
    let i = 0
    const timer = setInterval(() => {
      if (!socket.destroyed) socket.write(drip[i++ % drip.length] ?? 'x')
    }, 300)
    socket.on('connect', () => socket.write(head))
    socket.on('data', (chunk) => {
      answer += chunk
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      clearInterval(timer)
      resolve({ answer })
    })
  })
}

describe('hostile traffic', () => {
  let store: TestStoreConfig
  let server: RunningServer
  beforeAll(async () => {
    store = await freshStoreConfig('sqlite')
    server = await startServer({
      ...store.env,
      WARDEN_ADMIN_KEY: 'slow-admin-secret-0123456789abcdef',
      REQUEST_TIMEOUT_SECONDS: '2',
    })
  })
  afterAll(async () => {
    await server.stop()
    await store.drop()
  })

  it('cuts off a client that dribbles its headers', async () => {
    const result = await dribble(
      server.port,
      'POST /v1/applications HTTP/1.1\r\nHost: x\r\nX-Slow: ',
      'aaaaaaaa',
    )
    // The client never stops: the server cut it off (REQUEST_TIMEOUT_SECONDS=2), answering 408.
    expect(result.answer).toMatch(/^HTTP\/1\.1 408/)
  })

  it('cuts off a client that dribbles its body', async () => {
    const head =
      'POST /v1/applications HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer slow-admin-secret-0123456789abcdef\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{'
    const result = await dribble(server.port, head, '"a')
    // The client never stops: the server cut it off (REQUEST_TIMEOUT_SECONDS=2), answering 408.
    expect(result.answer).toMatch(/^HTTP\/1\.1 408/)
  })

  it('keeps serving others while hundreds of idle connections are open', async () => {
    const idle = await Promise.all(
      Array.from(
        { length: 300 },
        () =>
          new Promise<Socket>((resolve) => {
            const s = connect(server.port, '127.0.0.1', () => resolve(s))
            s.on('error', () => {})
          }),
      ),
    )
    try {
      const res = await fetch(`${server.url}/healthz`)
      expect(res.status).toBe(200)
      const created = await fetch(`${server.url}/v1/applications`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer slow-admin-secret-0123456789abcdef',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ name: 'still served', description: '' }),
      })
      expect(created.status).toBe(201)
    } finally {
      for (const s of idle) s.destroy()
    }
  })

  it('matches regexes in linear time: a classic catastrophic pattern finishes in RE2, and backtracking-only syntax is refused', async () => {
    const { compileRegex } = await import('../../src/rules/detectors/regex.js')
    const pattern = compileRegex('(a+)+$')
    // A backtracking engine would not finish this within the test's timeout.
    expect(pattern.test(`${'a'.repeat(100_000)}!`)).toBe(false)
    expect(() => compileRegex('(a)\\1')).toThrow()
  })
})

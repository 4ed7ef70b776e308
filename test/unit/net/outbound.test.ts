import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { letGo, postJson, readBody } from '../../../src/net/outbound.js'

/**
 * Abandoning a call at every point of its answer: the abort must never reach a socket that is no
 * longer the call's (back in the keep-alive pool), and nothing may end as an error nobody hears.
 */
describe('postJson abandoned at each point of the answer', () => {
  let server: Server
  let url: URL
  const uncaught: unknown[] = []
  const onUncaught = (error: unknown) => uncaught.push(error)

  beforeAll(async () => {
    process.on('uncaughtException', onUncaught)
    server = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' })
        // Head and body in one write, the end with them: the reader gets the whole answer at once.
        if (req.url === '/whole') res.end('{"ok":true}')
        // The rest never comes: only the reader's abort ends it.
        else res.write('{"ok":')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/whole`)
  })

  afterAll(async () => {
    process.off('uncaughtException', onUncaught)
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  /** Resolves on the next turns of the event loop, where a destroyed socket's error would be emitted. */
  const turns = async () => {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
  }

  const points: [string, (response: IncomingMessage, abort: () => void) => Promise<void>][] = [
    ['as the head arrives', async (_, abort) => abort()],
    [
      'once the whole answer arrived, before it was read',
      async (response, abort) => {
        await new Promise((resolve) => setImmediate(resolve))
        expect(response.complete).toBe(true)
        abort()
        letGo(response)
      },
    ],
    [
      'by a reader that stops at the answer’s last piece, as a stopped stream does',
      async (response, abort) => {
        for await (const _ of response) {
          if (!response.complete) continue
          abort()
          break
        }
      },
    ],
    [
      'as the answer ends',
      async (response, abort) => {
        response.once('end', abort)
        await readBody(response, 1000)
      },
    ],
    [
      'after the answer was read',
      async (response, abort) => {
        await readBody(response, 1000)
        abort()
      },
    ],
    [
      'after the answer was read and its connection went back to the pool',
      async (response, abort) => {
        await readBody(response, 1000)
        await turns()
        abort()
      },
    ],
  ]

  for (const [name, act] of points)
    it(`does nothing harmful when abandoned ${name}`, async () => {
      for (let round = 0; round < 5; round++) {
        const controller = new AbortController()
        const response = await postJson(url, {}, '{}', controller.signal)
        await act(response, () => controller.abort())
        await turns()
        // The next call works (on a pooled connection or a new one).
        const next = await postJson(url, {}, '{}', new AbortController().signal)
        expect(await readBody(next, 1000)).toBe('{"ok":true}')
      }
      expect(uncaught).toEqual([])
    })

  it('never lets an abandoned call reach the next call on its pooled connection', async () => {
    const first = new AbortController()
    await readBody(await postJson(url, {}, '{}', first.signal), 1000)
    await turns()
    const second = await postJson(new URL('/slow', url), {}, '{}', new AbortController().signal)
    const reading = readBody(second, 1000)
    first.abort()
    await turns()
    // The second call's answer is still arriving, on a connection the first call's abort left alone.
    expect(second.destroyed).toBe(false)
    second.destroy()
    await expect(reading).rejects.toBeDefined()
    expect(uncaught).toEqual([])
  })

  it('ends the body a reader is reading when abandoned mid-answer, and fails a call abandoned before its head', async () => {
    const controller = new AbortController()
    const response = await postJson(new URL('/slow', url), {}, '{}', controller.signal)
    const reading = readBody(response, 1000)
    controller.abort()
    await expect(reading).rejects.toBeDefined()
    const early = new AbortController()
    const call = postJson(url, {}, '{}', early.signal)
    early.abort()
    await expect(call).rejects.toMatchObject({ name: 'AbortError' })
    await turns()
    expect(uncaught).toEqual([])
  })
})

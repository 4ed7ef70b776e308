// @ts-check
// JavaScript, type-checked from its JSDoc: a worker thread's entry is a file Node loads as it is,
// and Node 20 loads no TypeScript. So the same file runs under the tests (from src/), from tsc's
// output (dist/http/) and beside the bundle (dist/, scripts/bundle.mjs).
import { parentPort } from 'node:worker_threads'
import secureJson from 'secure-json-parse'

/**
 * The JSON body parser's thread (json-body.ts): it decodes a large body's bytes and parses them
 * as Fastify's own JSON parser does (`__proto__` and `constructor.prototype` keys refused), and
 * sends the value back. Only the value's copy into the event loop's heap is left to the event
 * loop: a 20 MiB body's decoding and parsing held it 150–500 ms, its copy holds it 10–25 ms.
 *
 * @typedef {{ id: number, bytes: ArrayBuffer }} ParseRequest
 * @typedef {{ id: number, value?: unknown, invalid?: true }} ParseAnswer
 */
const port = parentPort
if (!port) throw new Error('json-parse-thread.js runs as a worker thread')
port.on('message', (/** @type {ParseRequest} */ { id, bytes }) => {
  /** @type {unknown} */
  let value
  try {
    value = secureJson.parse(Buffer.from(bytes), undefined, {
      protoAction: 'error',
      constructorAction: 'error',
    })
  } catch {
    port.postMessage(/** @type {ParseAnswer} */ ({ id, invalid: true }))
    return
  }
  port.postMessage(/** @type {ParseAnswer} */ ({ id, value }))
})

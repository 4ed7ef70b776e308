import { Worker } from 'node:worker_threads'
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify'
import { FairQueue } from '../fair-queue.js'

/**
 * A JSON body of this many bytes or more is decoded and parsed in a thread of its own: on the
 * event loop a 20 MiB body's decoding and parsing held it 150–500 ms here, during which no other
 * request, of any workspace, was served.
 */
export const PARSE_APART_FROM_BYTES = 1_048_576

const THREAD = new URL('./json-parse-thread.js', import.meta.url)

interface Job {
  bytes: Buffer
  resolve: (value: unknown) => void
  reject: (error: Error) => void
}

interface ParseAnswer {
  id: number
  value?: unknown
  invalid?: true
}

/**
 * The thread that parses large bodies, started on first use. It parses one body at a time,
 * taking workspaces in turn, so that one workspace's large bodies delay another's by at most one
 * of theirs. A thread that fails fails the bodies it was given; the next body starts another.
 */
export class JsonParseThread {
  private worker: Worker | null = null
  private readonly queue = new FairQueue<Job>()
  private running: { id: number; job: Job } | null = null
  private next = 1

  parse(tenant: string, bytes: Buffer): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.queue.push(tenant, { bytes, resolve, reject })
      this.pump()
    })
  }

  close(): Promise<number> | undefined {
    const worker = this.worker
    this.worker = null
    return worker?.terminate()
  }

  private pump(): void {
    if (this.running) return
    const next = this.queue.shift()
    if (!next) return
    const { bytes } = next.item
    // Handed over, not copied, when the bytes are a whole buffer of their own (as Fastify's are).
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    const buffer = whole
      ? bytes.buffer
      : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)
    const id = this.next++
    this.running = { id, job: next.item }
    this.thread().postMessage({ id, bytes: buffer }, [buffer as ArrayBuffer])
  }

  private thread(): Worker {
    if (this.worker) return this.worker
    const worker = new Worker(THREAD)
    worker.unref()
    worker.on('message', (answer: ParseAnswer) => {
      const running = this.running
      if (running?.id !== answer.id) return
      this.running = null
      if (answer.invalid) running.job.reject(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY())
      else running.job.resolve(answer.value)
      this.pump()
    })
    const fail = (error: Error) => {
      if (this.worker !== worker) return
      this.worker = null
      const running = this.running
      this.running = null
      running?.job.reject(error)
      this.pump()
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`the JSON parse thread stopped (exit code ${code})`)))
    this.worker = worker
    return worker
  }
}

/**
 * JSON bodies (application/json) are read with Fastify's limits and answers (413 past the route's
 * limit, declared or received, the rest of the body then dropped unread; a Content-Length the
 * body does not match; an empty body) and parsed by Fastify's own parser, `__proto__` and
 * `constructor.prototype` refused; those of PARSE_APART_FROM_BYTES or more in JsonParseThread,
 * off the event loop. A body of declared length is copied into one buffer as it arrives, where
 * gathering its chunks at the end held the event loop 70–130 ms for 20 MiB here.
 */
export function installJsonBodies(app: FastifyInstance, bodyLimit: number): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  const apart = new JsonParseThread()
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { bodyLimit }, (request, payload, done) => {
    const limit = request.routeOptions.bodyLimit
    const declared = Number(request.headers['content-length'])
    if (declared > limit) return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), undefined)
    const whole = declared >= PARSE_APART_FROM_BYTES ? Buffer.allocUnsafeSlow(declared) : null
    const chunks: Buffer[] = []
    let received = 0
    const stop = () => {
      payload.removeListener('data', onData)
      payload.removeListener('end', onEnd)
      payload.removeListener('error', onEnd)
    }
    function onData(chunk: Buffer) {
      received += chunk.length
      if (received > limit || (whole && received > whole.length)) {
        // The rest of the body flows on and is dropped.
        stop()
        const error =
          received > limit
            ? new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE()
            : new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH()
        return done(error, undefined)
      }
      if (whole) chunk.copy(whole, received - chunk.length)
      else chunks.push(chunk)
    }
    function onEnd(error?: Error & { statusCode?: number }) {
      stop()
      if (error) {
        if (!(typeof error.statusCode === 'number' && error.statusCode >= 400)) error.statusCode = 400
        return done(error, undefined)
      }
      if (!Number.isNaN(declared) && received !== declared)
        return done(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH(), undefined)
      const bytes = whole ?? Buffer.concat(chunks, received)
      if (bytes.length < PARSE_APART_FROM_BYTES) return parseJson(request, bytes.toString('utf8'), done)
      apart.parse(tenantOf(request), bytes).then(
        (value) => done(null, value),
        (failure: Error) => done(failure, undefined),
      )
    }
    payload.on('data', onData)
    payload.on('end', onEnd)
    payload.on('error', onEnd)
    payload.resume()
  })
  app.addHook('onClose', async () => {
    await apart.close()
  })
}

const tenantOf = (request: FastifyRequest): string => request.principal?.workspaceId ?? ''

import type { FastifyBaseLogger } from 'fastify'
import pino, { type Logger } from 'pino'
import type { LogLevel } from './config.js'

type Destination = ReturnType<typeof pino.destination>

/** Most lines held before they are handed on, whatever the turn of the event loop. */
const MAX_LINES = 256

/**
 * Hands log lines to the destination together: once per turn of the event loop, or every
 * MAX_LINES lines. Under load one turn answers many requests, each with its access line, and the
 * destination's cost is mostly per call: each call measures all the text it holds so far.
 * Lines keep their order, and none waits past the end of the turn that wrote it.
 */
export class LineBatch {
  private lines: string[] = []
  private scheduled = false

  constructor(private readonly destination: Destination) {}

  write(line: string): boolean {
    this.lines.push(line)
    if (this.lines.length >= MAX_LINES) this.drain()
    else if (!this.scheduled) {
      this.scheduled = true
      setImmediate(this.endOfTurn)
    }
    return true
  }

  private readonly endOfTurn = (): void => {
    this.scheduled = false
    this.drain()
  }

  private drain(): void {
    if (this.lines.length === 0) return
    const text = this.lines.join('')
    this.lines = []
    this.destination.write(text)
  }

  /** Writes out every line held here and in the destination, then calls `done`. */
  flush(done: (error?: Error) => void = () => {}): void {
    try {
      this.flushSync()
      done()
    } catch (error) {
      done(error as Error)
    }
  }

  flushSync(): void {
    this.drain()
    this.destination.flushSync()
  }
}

/** The fields of the access line each request writes when it completes. */
export interface AccessFields {
  reqId: string
  method: string
  url: string
  status: number
  ms: number
}

/**
 * Writes a request's access line at info level: exactly the line `logger.info(fields, 'request')`
 * would write. For a logger made by `createLogger`, it builds the line itself from the logger's
 * level number and bindings and hands it to the LineBatch, which costs a fraction of pino's
 * general path; this is the one line every request writes. Any other logger gets the call.
 */
export function accessLine(logger: FastifyBaseLogger): (fields: AccessFields) => void {
  const internals = logger as unknown as Record<symbol, unknown>
  const stream = internals[pino.symbols.streamSym]
  const bindings = internals[pino.symbols.chindingsSym]
  if (!(stream instanceof LineBatch) || typeof bindings !== 'string') {
    return (fields) => logger.info(fields, 'request')
  }
  const pinoLogger = logger as unknown as Logger
  const level = `{"level":${pinoLogger.levels.values.info},"time":`
  return (fields) => {
    if (!pinoLogger.isLevelEnabled('info')) return
    stream.write(
      `${level}${Date.now()}${bindings},"reqId":${JSON.stringify(fields.reqId)},"method":${JSON.stringify(fields.method)},"url":${JSON.stringify(fields.url)},"status":${fields.status},"ms":${fields.ms},"msg":"request"}\n`,
    )
  }
}

/** The options of the server's logger; `accessLine` writes the lines they make pino write. */
export const loggerOptions = (level: LogLevel) => ({
  level,
  redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
})

/**
 * JSON logs on standard output; human-readable only when a person is watching a terminal. JSON
 * lines are handed on once per turn of the event loop (LineBatch) and written synchronously in
 * blocks of 8 KiB, at least every 100 ms, and when the process exits: no write call per line,
 * and no hand-over to a thread per block.
 */
export function createLogger(level: LogLevel, pretty = process.stdout.isTTY === true): Logger {
  const options = loggerOptions(level)
  if (pretty)
    return pino({
      ...options,
      transport: { target: 'pino-pretty', options: { translateTime: 'SYS:standard' } },
    })
  const lines = new LineBatch(pino.destination({ dest: 1, sync: true, minLength: 8192 }))
  setInterval(() => lines.flushSync(), 100).unref()
  // Whatever way the process ends (a stop, a fatal error, process.exit), its last lines are written.
  process.on('exit', () => lines.flushSync())
  return pino(options, lines)
}

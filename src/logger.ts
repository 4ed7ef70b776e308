import { hostname } from 'node:os'
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

type LogMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

/**
 * A request's logger: every line it writes carries the request's bindings (its `reqId`), so no
 * call site adds them by hand. The pino child behind it is made only when the request first logs
 * a line of its own: most requests write none besides their access line, and making a child for
 * each of them costs more than that line.
 */
export class RequestLogger {
  private made: Logger | undefined

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
  ) {}

  private get logger(): Logger {
    this.made ??= this.parent.child(this.bindings)
    return this.made
  }

  get level(): string {
    return this.made ? this.made.level : this.parent.level
  }

  set level(level: string) {
    this.logger.level = level
  }

  isLevelEnabled(level: string): boolean {
    const logger = this.made ?? this.parent
    // Fastify's stand-in when logging is off has no isLevelEnabled; it writes nothing anyway.
    return typeof logger.isLevelEnabled === 'function' ? logger.isLevelEnabled(level) : true
  }

  child(bindings: Record<string, unknown>, options?: object): Logger {
    return this.logger.child(bindings, options)
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args)
  }
  error(...args: unknown[]): void {
    this.write('error', args)
  }
  warn(...args: unknown[]): void {
    this.write('warn', args)
  }
  info(...args: unknown[]): void {
    this.write('info', args)
  }
  debug(...args: unknown[]): void {
    this.write('debug', args)
  }
  trace(...args: unknown[]): void {
    this.write('trace', args)
  }
  silent(): void {}

  private write(method: LogMethod, args: unknown[]): void {
    if (!this.isLevelEnabled(method)) return
    ;(this.logger[method] as (...a: unknown[]) => void)(...args)
  }
}

/** The options of the server's logger. */
export const loggerOptions = (level: LogLevel) => ({
  level,
  base: { pid: process.pid, hostname: hostname() },
  redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
})

/**
 * JSON logs on standard output; human-readable only when a person is watching a terminal. JSON
 * lines are handed on once per turn of the event loop (LineBatch) and written synchronously in
 * blocks of 8 KiB, at least every 100 ms, and by `logger.flush()`: no write call per line, and
 * no hand-over to a thread per block. Whoever ends the process flushes it first (server.ts).
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
  return pino(options, lines)
}

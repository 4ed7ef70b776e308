import pino, { type Logger } from 'pino'
import type { LogLevel } from './config.js'

/**
 * JSON logs on standard output; human-readable only when a person is watching a terminal. JSON
 * lines are buffered (written in blocks of 4 KiB or every 100 ms rather than one write call per
 * line); `server.ts` flushes them on a graceful stop.
 */
export function createLogger(level: LogLevel, pretty = process.stdout.isTTY === true): Logger {
  const options = {
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
  }
  if (pretty)
    return pino({
      ...options,
      transport: { target: 'pino-pretty', options: { translateTime: 'SYS:standard' } },
    })
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 })
  setInterval(() => destination.flush(), 100).unref()
  return pino(options, destination)
}

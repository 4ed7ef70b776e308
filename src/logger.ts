import pino, { type Logger } from 'pino'
import type { LogLevel } from './config.js'

/** JSON logs on standard output; human-readable only when a person is watching a terminal. */
export function createLogger(level: LogLevel, pretty = process.stdout.isTTY === true): Logger {
  return pino({
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:standard' } } } : {}),
  })
}

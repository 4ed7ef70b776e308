import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import { LineBatch } from '../../src/logger.js'
import { nextTurn } from '../helpers/turns.js'

describe('log lines', () => {
  const dir = mkdtempSync(join(tmpdir(), 'warden-log-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const open = (name: string) => {
    const file = join(dir, name)
    const destination = pino.destination({ dest: file, sync: true })
    return { lines: new LineBatch(destination), read: () => readFileSync(file, 'utf8') }
  }

  it('reach the destination together at the end of the turn that wrote them, in order', async () => {
    const { lines, read } = open('turn.log')
    lines.write('one\n')
    lines.write('two\n')
    lines.write('three\n')
    expect(read()).toBe('')
    await nextTurn()
    expect(read()).toBe('one\ntwo\nthree\n')
  })

  it('are handed on at once when many pile up in one turn', () => {
    const { lines, read } = open('many.log')
    for (let i = 0; i < 300; i++) lines.write(`${i}\n`)
    const written = read().split('\n').filter(Boolean)
    expect(written).toEqual(Array.from({ length: 256 }, (_, i) => String(i)))
  })

  it('are all written out by a flush, and the callback runs after', () => {
    const { lines, read } = open('flush.log')
    lines.write('last words\n')
    let flushed = ''
    lines.flush(() => {
      flushed = read()
    })
    expect(flushed).toBe('last words\n')
  })

  it('from a pino logger keep their JSON shape', async () => {
    const { lines, read } = open('pino.log')
    const logger = pino({ level: 'info' }, lines)
    logger.info({ reqId: 'r-1', status: 200 }, 'request')
    logger.warn('careful')
    await nextTurn()
    const parsed = read()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(parsed).toMatchObject([
      { level: 30, reqId: 'r-1', status: 200, msg: 'request' },
      { level: 40, msg: 'careful' },
    ])
  })

  // The server's logger, in a process of its own (from the built code, as `warden serve` runs it).
  const lastLines = (ending: string) => {
    const logger = new URL('../../dist/logger.js', import.meta.url).href
    const script = `import { createLogger } from '${logger}'
      const log = createLogger('info', false)
      log.info({ step: 1 }, 'first')
      log.warn({ step: 2 }, 'second')
      ${ending}`
    return spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  }
  const messages = (stdout: string) =>
    stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).msg)

  it('of a request are built as exactly the line pino writes for the same fields, and follow the level', () => {
    const logger = new URL('../../dist/logger.js', import.meta.url).href
    const fields = {
      reqId: 'r-"2"',
      method: 'GET',
      url: '/v1/applications?cursor=a\\b',
      status: 200,
      ms: 0.4,
    }
    const script = `import { accessLine, createLogger } from '${logger}'
      const log = createLogger('info', false)
      const fields = ${JSON.stringify(fields)}
      accessLine(log)(fields)
      log.info(fields, 'request')
      log.level = 'warn'
      accessLine(log)({ ...fields, status: 404 })`
    const ended = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
    const [built, fromPino, ...rest] = ended.stdout.trim().split('\n')
    expect(rest).toEqual([])
    const { time: builtTime, ...builtLine } = JSON.parse(built as string)
    const { time: pinoTime, ...pinoLine } = JSON.parse(fromPino as string)
    expect(builtLine).toEqual(pinoLine)
    expect(builtLine).toMatchObject({ reqId: 'r-"2"', url: '/v1/applications?cursor=a\\b', msg: 'request' })
    expect(Object.keys(JSON.parse(built as string))).toEqual(Object.keys(JSON.parse(fromPino as string)))
    expect(Math.abs(builtTime - pinoTime)).toBeLessThan(1000)
  })

  it('are all written when the process exits at once', () => {
    const ended = lastLines('process.exit(3)')
    expect(ended.status).toBe(3)
    expect(messages(ended.stdout)).toEqual(['first', 'second'])
  })

  it('are all written when the process dies of an uncaught error', () => {
    const ended = lastLines("setImmediate(() => { throw new Error('boom') })")
    expect(ended.status).not.toBe(0)
    expect(ended.stderr).toContain('boom')
    expect(messages(ended.stdout)).toEqual(['first', 'second'])
  })
})

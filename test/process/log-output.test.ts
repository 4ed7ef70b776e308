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

  it('are all written by the logger’s flush, at once: what the server does as its process exits', () => {
    const { lines, read } = open('exit.log')
    const logger = pino({ level: 'info' }, lines)
    logger.info('first')
    logger.warn('second')
    expect(read()).toBe('')
    logger.flush()
    expect(
      read()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).msg),
    ).toEqual(['first', 'second'])
  })
})

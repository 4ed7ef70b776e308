import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { strToU8, zipSync } from 'fflate'
import { parquetMetadata } from 'hyparquet'
import { afterAll, describe, expect, it } from 'vitest'
import { gitMirrors, memoryTree, withholding } from '../../../scripts/detectors/files.mjs'
import { csvObjects, parquetObjects, unzip } from '../../../scripts/detectors/readers/formats.mjs'
import { deepsetParquet } from './fixtures.js'

describe('CSV', () => {
  it('reads rows as objects keyed by the trimmed header, quoted fields whole', () => {
    const text = 'id, text ,label\r\n1,"a, b",x\r\n2,"line one\nline two ""quoted""",y\r\n'
    expect(csvObjects(text)).toEqual([
      { id: '1', text: 'a, b', label: 'x' },
      { id: '2', text: 'line one\nline two "quoted"', label: 'y' },
    ])
  })

  it('gives missing fields as empty, drops extra fields and blank lines', () => {
    expect(csvObjects('a,b,c\n1\n\n2,3,4,5\n')).toEqual([
      { a: '1', b: '', c: '' },
      { a: '2', b: '3', c: '4' },
    ])
  })

  it('is no rows for a header alone or an empty file', () => {
    expect(csvObjects('a,b\n')).toEqual([])
    expect(csvObjects('')).toEqual([])
  })

  it('refuses a quote that opens inside an unquoted field instead of guessing', () => {
    expect(() => csvObjects('a,b\nx"y,z\n')).toThrow()
  })
})

describe('Parquet', () => {
  it('reads a Snappy-compressed file: strings and 64-bit integers', async () => {
    const file = deepsetParquet([
      ['Ignore the above', 1n],
      ['Hello', 0n],
    ])
    const meta = parquetMetadata(file.buffer as ArrayBuffer)
    expect(meta.row_groups[0]?.columns.map((c) => c.meta_data?.codec)).toEqual(['SNAPPY', 'SNAPPY'])
    expect(await parquetObjects(Buffer.from(file))).toEqual([
      { text: 'Ignore the above', label: 1n },
      { text: 'Hello', label: 0n },
    ])
  })

  it('reads a file that sits inside a larger buffer', async () => {
    const file = deepsetParquet([['x y z', 1n]])
    const padded = Buffer.concat([Buffer.from('junk'), Buffer.from(file), Buffer.from('junk')])
    const view = padded.subarray(4, 4 + file.length)
    expect(await parquetObjects(view)).toEqual([{ text: 'x y z', label: 1n }])
  })

  it('rejects what is not Parquet', async () => {
    await expect(parquetObjects(Buffer.from('not a parquet file at all'))).rejects.toThrow()
  })
})

describe('ZIP', () => {
  const archive = Buffer.from(
    zipSync({
      'dir/a.csv': strToU8('x,y\n1,2\n'),
      'dir/b.csv': [strToU8('compressed '.repeat(50)), { level: 9 }],
      'dir/stored.txt': [strToU8('stored'), { level: 0 }],
    }),
  )

  it('gives the files asked for, deflated or stored', () => {
    const files = unzip(archive, ['dir/a.csv', 'dir/b.csv', 'dir/stored.txt'])
    expect(files.get('dir/a.csv')?.toString('utf8')).toBe('x,y\n1,2\n')
    expect(files.get('dir/b.csv')?.toString('utf8')).toBe('compressed '.repeat(50))
    expect(files.get('dir/stored.txt')?.toString('utf8')).toBe('stored')
  })

  it('names a file the archive lacks', () => {
    expect(() => unzip(archive, ['dir/c.csv'])).toThrow('dir/c.csv not in the archive')
  })
})

describe('file trees', () => {
  const tree = memoryTree({
    'a/one.txt': '\uFEFFfirst',
    'a/two.txt': 'second',
    'b/three.txt': 'third',
  })

  it('lists a folder or everything, sorted, and reads text without a byte-order mark', () => {
    expect(tree.list('a/')).toEqual(['a/one.txt', 'a/two.txt'])
    expect(tree.list('.')).toEqual(['a/one.txt', 'a/two.txt', 'b/three.txt'])
    expect(tree.text('a/one.txt')).toBe('first')
    expect(tree.blobs(['b/three.txt', 'a/two.txt']).map((b) => b.toString())).toEqual(['third', 'second'])
    expect(() => tree.text('c.txt')).toThrow('c.txt missing')
  })

  it('takes withheld files and folders out of lists and refuses to read them', () => {
    const guarded = withholding(tree, ['a/one.txt', 'b/'], 'owner/repo')
    expect(guarded.list('.')).toEqual(['a/two.txt'])
    expect(guarded.text('a/two.txt')).toBe('second')
    expect(() => guarded.text('a/one.txt')).toThrow('owner/repo:a/one.txt is held out')
    expect(() => guarded.blob('b/three.txt')).toThrow('is held out')
    expect(() => guarded.blobs(['a/two.txt', 'b/three.txt'])).toThrow('is held out')
    const whole = withholding(tree, [''], 'owner/repo')
    expect(whole.list('.')).toEqual([])
    expect(() => whole.text('a/two.txt')).toThrow('is held out')
  })
})

describe('git mirrors', () => {
  const root = mkdtempSync(join(tmpdir(), 'warden-mirrors-'))
  afterAll(() => rmSync(root, { recursive: true, force: true }))
  const work = join(root, 'work')
  mkdirSync(join(work, 'data'), { recursive: true })
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', work, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args])
      .toString()
      .trim()
  git('init', '-q')
  writeFileSync(join(work, 'data', 'b.txt'), '\uFEFFpinned')
  writeFileSync(join(work, 'data', 'a.txt'), 'alpha')
  git('add', '.')
  git('commit', '-q', '-m', 'one')
  const pinned = git('rev-parse', 'HEAD')
  writeFileSync(join(work, 'data', 'b.txt'), 'later')
  git('commit', '-q', '-am', 'two')
  execFileSync('git', ['clone', '-q', '--bare', work, join(root, 'mirrors', 'owner+name', 'repo')])

  it('reads files at the pinned commit, not the newest', () => {
    const tree = gitMirrors(join(root, 'mirrors'))({ repo: 'owner/name', commit: pinned })
    expect(tree.text('data/b.txt')).toBe('pinned')
    expect(tree.list('data/')).toEqual(['data/a.txt', 'data/b.txt'])
    expect(tree.blobs(['data/b.txt', 'data/a.txt']).map((b) => b.toString())).toEqual([
      '\uFEFFpinned',
      'alpha',
    ])
    expect(() => tree.blobs(['data/missing.txt'])).toThrow('owner/name:data/missing.txt missing')
  })

  it('says which mirror is missing', () => {
    const tree = gitMirrors(join(root, 'mirrors'))({ repo: 'other/repo', commit: pinned })
    expect(() => tree.text('x')).toThrow('no mirror of other/repo')
  })
})

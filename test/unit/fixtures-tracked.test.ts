import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '../..')
const fixtures = join(root, 'test/fixtures')

const git = (args: string[], input?: string) =>
  spawnSync('git', args, { cwd: root, input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] })

// Outside a git checkout (an unpacked tarball) there is nothing to ask git about.
const inCheckout = git(['rev-parse', '--is-inside-work-tree']).stdout?.trim() === 'true'

// A fixture that a .gitignore pattern matches works on the machine that wrote it and is never
// committed: the tests then fail everywhere else (a `data/` pattern once hid a folder of them).
describe.skipIf(!inCheckout)('test fixtures', () => {
  it('are none of them ignored by git, committed or not', () => {
    const files = readdirSync(fixtures, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    expect(files.length).toBeGreaterThan(0)
    // --no-index: the patterns are checked against committed files too, so a rule that would
    // hide a new file beside them is caught. Exit status 0: some ignored; 1: none.
    const checked = git(['check-ignore', '--no-index', '--verbose', '-z', '--stdin'], `${files.join('\0')}\0`)
    expect(checked.status === 0 || checked.status === 1, checked.stderr).toBe(true)
    expect(checked.stdout.split('\0').filter(Boolean)).toEqual([])
  })

  it('leave no untracked ignored file under test/fixtures', () => {
    const listed = git(['ls-files', '--others', '--ignored', '--exclude-standard', '--', 'test/fixtures'])
    expect(listed.status, listed.stderr).toBe(0)
    expect(listed.stdout.split('\n').filter(Boolean)).toEqual([])
  })
})

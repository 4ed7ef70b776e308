// The files a source is read from: one repository at one commit, as a small interface that the
// readers take (`FileTree`), so a reader is a function of the files it is handed. prepare-data
// hands them trees over the git mirrors; the tests hand them trees built in memory.
//
//   blob(path)    the file's bytes (a Buffer); throws when the file is missing
//   text(path)    the file as UTF-8, a leading byte-order mark dropped
//   blobs(paths)  several files at once, in the order asked
//   list(prefix)  the paths under a folder (`dir/`), or every path (`.`), sorted
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

/** @typedef {{ blob(path: string): Buffer, text(path: string): string, blobs(paths: string[]): Buffer[], list(prefix: string): string[] }} FileTree */

const utf8Text = (buf) => buf.toString('utf8').replace(/^\uFEFF/, '')

/**
 * Trees over bare git mirrors, each `<root>/<owner>+<name>/repo` (or `<root>/<owner>+<name>`,
 * or `<root>/<owner>+<name>.git`), read with `git cat-file` at the pinned commit so that every
 * run reads the same bytes. Returns `tree({repo, commit})`.
 * @param {string} root
 * @returns {(at: { repo: string, commit: string }) => FileTree}
 */
export function gitMirrors(root) {
  const dirs = new Map()
  const git = (dir, args, input) =>
    execFileSync('git', ['--git-dir', dir, ...args], {
      input,
      maxBuffer: 1 << 30,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
  const gitDir = (repo, commit) => {
    const known = dirs.get(repo)
    if (known) return known
    const base = join(root, repo.replace('/', '+'))
    const candidates = [join(base, 'repo'), base, `${base}.git`]
    const dir = candidates.find((d) => existsSync(join(d, 'HEAD')) && existsSync(join(d, 'objects')))
    if (!dir) throw new Error(`no mirror of ${repo} under ${root}`)
    git(dir, ['cat-file', '-e', `${commit}^{commit}`])
    dirs.set(repo, dir)
    return dir
  }
  return ({ repo, commit }) => {
    const blob = (path) => {
      const buf = git(gitDir(repo, commit), ['cat-file', 'blob', `${commit}:${path}`])
      if (buf.subarray(0, 40).toString().startsWith('version https://git-lfs'))
        throw new Error(`${repo}:${path} is a Git LFS pointer, not data`)
      return buf
    }
    return {
      blob,
      text: (path) => utf8Text(blob(path)),
      list: (prefix) =>
        git(gitDir(repo, commit), ['ls-tree', '-r', '--name-only', commit, '--', prefix])
          .toString('utf8')
          .split('\n')
          .filter(Boolean)
          .sort(),
      // One `git cat-file --batch` call for many files.
      blobs: (paths) => {
        const out = git(
          gitDir(repo, commit),
          ['cat-file', '--batch'],
          paths.map((p) => `${commit}:${p}\n`).join(''),
        )
        const blobs = []
        let pos = 0
        for (const path of paths) {
          const eol = out.indexOf(10, pos)
          const header = out.subarray(pos, eol).toString('utf8').split(' ')
          if (header[1] !== 'blob') throw new Error(`${repo}:${path} missing at ${commit}`)
          const size = Number(header[2])
          blobs.push(out.subarray(eol + 1, eol + 1 + size))
          pos = eol + 1 + size + 1
        }
        return blobs
      },
    }
  }
}

/**
 * A tree of the given files, for tests and small inputs.
 * @param {Record<string, string | Uint8Array>} files
 * @returns {FileTree}
 */
export function memoryTree(files) {
  const paths = Object.keys(files).sort()
  const blob = (path) => {
    const content = files[path]
    if (content === undefined) throw new Error(`${path} missing`)
    return typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content)
  }
  return {
    blob,
    text: (path) => utf8Text(blob(path)),
    blobs: (paths) => paths.map(blob),
    list: (prefix) => (prefix === '.' ? [...paths] : paths.filter((p) => p.startsWith(prefix))),
  }
}

/**
 * Whether `path` is one of `withheld`: a file's path, a folder ending in `/`, or `''` for all.
 * @type {(withheld: string[], path: string) => boolean}
 */
export const isWithheld = (withheld, path) =>
  withheld.some((w) => w === '' || w === path || (w.endsWith('/') && path.startsWith(w)))

/**
 * `tree` with the `withheld` paths taken out: listed nowhere, and reading one throws. Training
 * readers get their trees through this, so a held-out set cannot be read for training even by a
 * reader that lists a whole folder.
 * @param {FileTree} tree
 * @param {string[]} withheld
 * @param {string} repo
 * @returns {FileTree}
 */
export function withholding(tree, withheld, repo) {
  if (withheld.length === 0) return tree
  const check = (path) => {
    if (isWithheld(withheld, path)) throw new Error(`${repo}:${path} is held out: never read for training`)
    return path
  }
  return {
    blob: (path) => tree.blob(check(path)),
    text: (path) => tree.text(check(path)),
    blobs: (paths) => tree.blobs(paths.map(check)),
    list: (prefix) => tree.list(prefix).filter((p) => !isWithheld(withheld, p)),
  }
}

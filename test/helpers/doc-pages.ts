import { readdirSync, readFileSync } from 'node:fs'

/**
 * The pages a reader follows: README.md, then every page of docs/ in the order of their names.
 * The shell sessions they show are run as written (test/process/readme.test.ts,
 * readme-guards.test.ts), and their links are checked (test/unit/docs-links.test.ts).
 */

const ROOT = new URL('../../', import.meta.url)

export interface Page {
  /** The page's path from the repository's root, as `docs/tutorial.md`. */
  path: string
  text: string
}

/** README.md, then docs/*.md by name. */
export function docPages(): Page[] {
  const docs = readdirSync(new URL('docs/', ROOT))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`)
  return ['README.md', ...docs].map((path) => ({ path, text: readFileSync(new URL(path, ROOT), 'utf8') }))
}

/** The text of a file under the repository's root. */
export const readRepoFile = (path: string): string => readFileSync(new URL(path, ROOT), 'utf8')

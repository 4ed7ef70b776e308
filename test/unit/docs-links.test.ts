import { existsSync, statSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { describe, expect, it } from 'vitest'
import { docPages, type Page, readRepoFile } from '../helpers/doc-pages.js'

/**
 * Every relative link of the README, of docs/ and of bench/README.md leads somewhere: to a file
 * or folder of the repository and, where it names an `#anchor`, to a heading of that page (or to
 * this page's own heading, for a bare `#anchor`). Headings are read as GitHub renders their ids.
 */

const ROOT = new URL('../../', import.meta.url)
const PAGES: Page[] = [...docPages(), { path: 'bench/README.md', text: readRepoFile('bench/README.md') }]

/** The page without its fenced code blocks and inline code, which hold no links. */
function prose(markdown: string): string {
  const lines: string[] = []
  let fence: string | null = null
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    const inCode = fence !== null || marker !== undefined
    if (fence === null && marker) fence = marker
    else if (fence !== null && marker?.startsWith(fence)) fence = null
    lines.push(inCode ? '' : line)
  }
  return lines.join('\n').replace(/(`+)[^`]*?\1/g, (code) => ' '.repeat(code.length))
}

/**
 * A heading's id as GitHub makes it (the github-slugger algorithm): its text as rendered, lower
 * case, without any character that is not a letter, a mark, a digit, a connector such as `_`, a
 * hyphen or a space, its spaces as hyphens; a repeated id gets `-1`, `-2`, ….
 */
function headingIds(markdown: string): Set<string> {
  const ids = new Set<string>()
  const seen = new Map<string, number>()
  let fence: string | null = null
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence === null && marker) fence = marker
    else if (fence !== null && marker?.startsWith(fence)) fence = null
    if (fence !== null || marker) continue
    for (const anchor of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) ids.add(anchor[1] as string)
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const text = heading
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/`/g, '')
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    ids.add(count === 0 ? base : `${base}-${count}`)
  }
  return ids
}

interface Link {
  page: string
  line: number
  target: string
}

/** The relative links of a page: inline links and images, and reference definitions. */
function relativeLinks(page: Page): Link[] {
  const links: Link[] = []
  prose(page.text)
    .split('\n')
    .forEach((line, i) => {
      const targets = [
        ...[...line.matchAll(/\]\(\s*<?([^()\s<>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] as string),
        ...[...line.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/g)].map((m) => m[1] as string),
      ]
      for (const target of targets) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // http:, https:, mailto:
        links.push({ page: page.path, line: i + 1, target })
      }
    })
  return links
}

/** What is wrong with a link; null when it leads somewhere. */
function broken(link: Link): string | null {
  const [path = '', anchor] = link.target.split('#', 2)
  const file = path === '' ? link.page : normalize(join(dirname(link.page), decodeURIComponent(path)))
  if (file.startsWith('..')) return `${link.target} leads out of the repository`
  const url = new URL(file, ROOT)
  if (!existsSync(url)) return `${link.target}: there is no ${file}`
  if (anchor === undefined) return null
  if (statSync(url).isDirectory() || !file.endsWith('.md')) return `${link.target}: ${file} has no headings`
  if (!headingIds(readRepoFile(file)).has(anchor)) return `${link.target}: ${file} has no heading #${anchor}`
  return null
}

describe('the links between the pages', () => {
  it('reads headings as GitHub gives them ids', () => {
    const ids = headingIds(
      [
        '# Warden',
        '## Put Warden in front of your model in one line',
        '### Messages and documents: two readings of prompt_injection',
        '## The guarded chat completion proxy (bench/proxy.mjs)',
        '## `method`: what produced a verdict',
        '## Two tenants (bench/tenants.mjs)',
        '## Two tenants (bench/tenants.mjs)',
        '## Detectors at memory speed (issue 22, item 3; 2026-11-24)',
        '```sh',
        '# not a heading',
        '```',
      ].join('\n'),
    )
    expect([...ids]).toEqual([
      'warden',
      'put-warden-in-front-of-your-model-in-one-line',
      'messages-and-documents-two-readings-of-prompt_injection',
      'the-guarded-chat-completion-proxy-benchproxymjs',
      'method-what-produced-a-verdict',
      'two-tenants-benchtenantsmjs',
      'two-tenants-benchtenantsmjs-1',
      'detectors-at-memory-speed-issue-22-item-3-2026-11-24',
    ])
  })

  it('finds links outside code, and no link inside it', () => {
    const links = relativeLinks({
      path: 'docs/x.md',
      text: [
        'See [the tutorial](tutorial.md#evaluate) and ![a picture](console-playground.png "it").',
        '[`models/README.md`](../models/README.md), <https://example.com>, [out](https://example.com/a).',
        '`[not](a-link.md)`',
        '```md',
        '[not](a-link-either.md)',
        '```',
        '[ref]: conventions.md',
      ].join('\n'),
    })
    expect(links.map((l) => [l.line, l.target])).toEqual([
      [1, 'tutorial.md#evaluate'],
      [1, 'console-playground.png'],
      [2, '../models/README.md'],
      [7, 'conventions.md'],
    ])
  })

  it('finds a link to a missing page, a missing heading, and one out of the repository broken', () => {
    expect(broken({ page: 'README.md', line: 1, target: 'docs/no-such-page.md' })).toMatch(
      /no docs\/no-such-page.md/,
    )
    expect(broken({ page: 'README.md', line: 1, target: 'docs/README.md#no-such-heading' })).toMatch(
      /no heading #no-such-heading/,
    )
    expect(broken({ page: 'docs/README.md', line: 1, target: '../../elsewhere.md' })).toMatch(
      /out of the repository/,
    )
    expect(broken({ page: 'docs/README.md', line: 1, target: '../README.md' })).toBeNull()
  })

  it.each(PAGES.map((page) => [page.path, page] as const))('%s links only to what exists', (_, page) => {
    const problems = relativeLinks(page).flatMap((link) => {
      const problem = broken(link)
      return problem === null ? [] : [`${link.page}:${link.line}: ${problem}`]
    })
    expect(problems).toEqual([])
  })
})

import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { docPages } from '../helpers/doc-pages.js'
import { type RunningServer, startServer } from '../helpers/process.js'
import { completion, startUpstreamDouble, type UpstreamDouble } from '../helpers/upstream-double.js'

/**
 * The shell sessions of the README and of docs/, run as written. A fenced `sh` block preceded by
 * the comment `<!-- readme-test: SESSION -->` belongs to SESSION (`<!-- readme-test: quickstart
 * walkthrough -->`: to both); each session's blocks run in the order a reader meets them (the
 * README first, then the pages of docs/ by name, each from the top) in one `sh`, against a first
 * start of Warden in an empty directory, with WARDEN_KEY set to the key it printed and the pages'
 * `127.0.0.1:8080` and `localhost:8080` pointing at that server. The fenced `http`, `json` or
 * `text` block right after a command block (blank lines only between) shows the answer to the
 * block's last request: its status, its headers as shown and its body are checked, where ids,
 * times, request ids, ETags and secrets only need the right shape. Every other request of a
 * session must succeed (2xx). `<!-- readme-test: first-start -->` marks the text the first start
 * prints. The `proxy` session's Warden has a model behind it: a fake OpenAI upstream that answers
 * about the first placeholder it was sent.
 */

const MARKER = /^<!-- readme-test: ([a-z-]+(?: [a-z-]+)*) -->$/

interface Block {
  lang: string
  text: string
  /** The page, and the 1-based line of its opening fence: `docs/tutorial.md line 12`. */
  where: string
  /** The sessions it belongs to; empty when unmarked. */
  markers: string[]
  /** The block right after this one, when only blank lines separate them. */
  next: Block | null
}

function fencedBlocks(markdown: string, page: string): Block[] {
  const lines = markdown.split('\n')
  const blocks: Block[] = []
  let lastNonBlank = ''
  let previous: { block: Block; endLine: number } | null = null
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i] ?? '')
    if (!open) {
      if ((lines[i] ?? '').trim() !== '') lastNonBlank = (lines[i] ?? '').trim()
      continue
    }
    const start = i
    const body: string[] = []
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i] ?? '')
    const block: Block = {
      lang: open[1] ?? '',
      text: body.join('\n'),
      where: `${page} line ${start + 1}`,
      markers: MARKER.exec(lastNonBlank)?.[1]?.split(' ') ?? [],
      next: null,
    }
    if (previous && lines.slice(previous.endLine + 1, start).every((l) => l.trim() === '')) {
      previous.block.next = block
    }
    blocks.push(block)
    previous = { block, endLine: i }
    lastNonBlank = '```'
  }
  return blocks
}

/** An answer as curl printed it: with `-i`, a status line and headers; a body, if any. */
interface Answer {
  status: number | null
  headers: [string, string][]
  body: string
}

/** The end of the JSON value that starts at `from` (an object or an array). */
function endOfJson(text: string, from: number): number {
  let depth = 0
  let inString = false
  for (let i = from; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === '{' || c === '[') depth++
    else if (c === '}' || c === ']') {
      depth--
      if (depth === 0) return i + 1
    }
  }
  return text.length
}

/** Splits what a block printed into the answers of its requests, in order. */
function answers(printed: string): Answer[] {
  const text = printed.replaceAll('\r\n', '\n')
  const found: Answer[] = []
  let at = 0
  while (at < text.length) {
    while (at < text.length && /\s/.test(text[at] ?? '')) at++
    if (at >= text.length) break
    if (text.startsWith('HTTP/', at)) {
      const headEnd = text.indexOf('\n\n', at)
      const head = text.slice(at, headEnd === -1 ? text.length : headEnd).split('\n')
      const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(head[0] ?? '')?.[1])
      const headers = head.slice(1).map((h): [string, string] => {
        const colon = h.indexOf(':')
        return [h.slice(0, colon).trim().toLowerCase(), h.slice(colon + 1).trim()]
      })
      at = headEnd === -1 ? text.length : headEnd + 2
      let body = ''
      if (text[at] === '{' || text[at] === '[') {
        const end = endOfJson(text, at)
        body = text.slice(at, end)
        at = end
      }
      found.push({ status, headers, body })
    } else if (text[at] === '{' || text[at] === '[') {
      const end = endOfJson(text, at)
      found.push({ status: null, headers: [], body: text.slice(at, end) })
      at = end
    } else {
      const end = text.indexOf('\n', at)
      found.push({ status: null, headers: [], body: text.slice(at, end === -1 ? text.length : end) })
      at = end === -1 ? text.length : end + 1
    }
  }
  return found
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ETAG = /^"[0-9a-f]{32}"$/
/** Fields whose values differ from run to run: only their type is checked. */
const VARYING = new Set(['created', 'updated', 'latency_ms', 'request_id', 'key_id'])

/**
 * Where `actual` differs from what the page shows, as JSON Pointers with both values; empty
 * when they agree. `…` on a page (as `"…"`, `{…}` or `[…]`) stands for any value.
 */
function differences(shown: unknown, actual: unknown, path = ''): string[] {
  const differ = () => [
    `${path || '/'}: the page shows ${JSON.stringify(shown)}, the server answered ${JSON.stringify(actual)}`,
  ]
  if (shown === '…') return []
  const field = path.slice(path.lastIndexOf('/') + 1)
  if (VARYING.has(field) && shown !== null) return typeof shown === typeof actual ? [] : differ()
  if (typeof shown === 'string' && typeof actual === 'string') {
    if (UUID.test(shown)) return UUID.test(actual) ? [] : differ()
    if (shown.startsWith('wdn_')) {
      return actual.startsWith('wdn_') && actual.length === shown.length ? [] : differ()
    }
    return shown === actual ? [] : differ()
  }
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual) || actual.length !== shown.length) return differ()
    return shown.flatMap((item, i) => differences(item, actual[i], `${path}/${i}`))
  }
  if (shown !== null && typeof shown === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return differ()
    const keys = Object.keys(shown)
    const extra = Object.keys(actual).filter((k) => !keys.includes(k))
    if (extra.length > 0) return [`${path || '/'}: the server also answered ${extra.join(', ')}`]
    return keys.flatMap((k) =>
      differences(
        (shown as Record<string, unknown>)[k],
        (actual as Record<string, unknown>)[k],
        `${path}/${k}`,
      ),
    )
  }
  return Object.is(shown, actual) ? [] : differ()
}

/** A page's JSON, with its `{…}` and `[…]` placeholders read as `"…"`. */
const readmeJson = (text: string): unknown =>
  JSON.parse(text.replaceAll('{…}', '"…"').replaceAll('[…]', '"…"'))

/** What the page shows after a command: the answer of the block's last request. */
function expectedAnswer(block: Block): Answer {
  if (block.lang === 'http') {
    const [answer] = answers(block.text)
    if (!answer) throw new Error(`${block.where}: an empty http block`)
    return answer
  }
  if (block.lang === 'json') {
    const body = readmeJson(block.text) as { status?: unknown; type?: unknown } | null
    // A problem shows its status in its body.
    const status = typeof body?.status === 'number' && typeof body.type === 'string' ? body.status : null
    return { status, headers: [], body: block.text }
  }
  return { status: null, headers: [], body: block.text }
}

/** Every way the page's shown answer and the server's differ. */
function compare(shown: Answer, actual: Answer, lang: string): string[] {
  const problems: string[] = []
  if (shown.status !== null && shown.status !== actual.status) {
    problems.push(`status: the page shows ${shown.status}, the server answered ${actual.status}`)
  }
  for (const [name, value] of shown.headers) {
    const sent = actual.headers.find(([n]) => n === name)?.[1]
    if (sent === undefined) problems.push(`header ${name}: not sent`)
    else if (name === 'etag') {
      if (!ETAG.test(value)) problems.push(`header etag: the page's ${value} is not the shape of an ETag`)
      if (!ETAG.test(sent)) problems.push(`header etag: the server sent ${sent}`)
    } else if (sent !== value)
      problems.push(`header ${name}: the page shows ${value}, the server sent ${sent}`)
  }
  if (lang === 'http' && actual.headers.length === 0)
    problems.push('the page shows headers, the command prints none')
  if (lang === 'json' && actual.headers.length > 0)
    problems.push('the command prints headers, the page shows none')
  if (lang === 'text') {
    // An ETag in a text only needs the shape of one.
    const etags = (text: string) => text.trim().replace(/"[0-9a-f]{32}"/g, '"<etag>"')
    if (etags(actual.body) !== etags(shown.body)) {
      problems.push(
        `the page shows ${JSON.stringify(shown.body)}, the server answered ${JSON.stringify(actual.body)}`,
      )
    }
  } else if (shown.body.trim() === '') {
    if (actual.body.trim() !== '') problems.push(`the page shows no body, the server answered ${actual.body}`)
  } else {
    let body: unknown
    try {
      body = JSON.parse(actual.body)
    } catch {
      return [...problems, `the server answered ${JSON.stringify(actual.body)}, not JSON`]
    }
    problems.push(...differences(readmeJson(shown.body), body))
  }
  return problems
}

const pages = docPages()
const blocks = pages.flatMap((page) => fencedBlocks(page.text, page.path))
const marked = blocks.filter((b) => b.markers.length > 0)
const sessions = [...new Set(marked.flatMap((b) => b.markers))].filter((name) => name !== 'first-start')
const blocksOf = (session: string) => marked.filter((b) => b.markers.includes(session))
/** The pages that hold a session's blocks, in the order they run. */
const pagesOf = (session: string) => [...new Set(blocksOf(session).map((b) => b.where.split(' ')[0]))]

const STATUS = '@@readme-test status '
const END = '@@readme-test end of block '

/**
 * One sh script for a session's blocks: curl reports each answer's status on standard error
 * (its output is untouched), and a line after each block marks where its output ends.
 */
function script(session: Block[], port: number): string {
  const lines = ['set -e', `curl() { command curl --write-out '%{stderr}${STATUS}%{http_code}\\n' "$@"; }`]
  session.forEach((block, i) => {
    lines.push(block.text.replace(/(?:127\.0\.0\.1|localhost):8080/g, `127.0.0.1:${port}`))
    lines.push(`printf '\\n${END}${i}\\n'`, `printf '${END}${i}\\n' >&2`)
  })
  return `${lines.join('\n')}\n`
}

/** Cuts a stream at the block-end lines, into one piece per block. */
const perBlock = (stream: string, count: number): string[] => {
  const pieces: string[] = []
  let rest = stream
  for (let i = 0; i < count; i++) {
    const mark = `${END}${i}\n`
    const at = rest.indexOf(mark)
    if (at === -1) break
    pieces.push(rest.slice(0, at))
    rest = rest.slice(at + mark.length)
  }
  return pieces
}

/**
 * Runs an sh script to its end, without blocking this process (the proxy session's model answers
 * from here); killed after 20 s.
 */
function runSh(
  text: string,
  options: { cwd: string; env: Record<string, string> },
): Promise<{ stdout: string; stderr: string; status: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', text], { ...options, timeout: 20_000 })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
    })
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d
    })
    child.on('error', reject)
    child.on('close', (status) => resolve({ stdout, stderr, status }))
  })
}

describe("the README's and docs' sessions", () => {
  const servers: RunningServer[] = []
  const dirs: string[] = []
  const upstreams: UpstreamDouble[] = []
  afterAll(async () => {
    for (const server of servers) await server.stop()
    for (const upstream of upstreams) await upstream.close()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  /** A first start in an empty directory, as the quick start runs it; and the key it printed. */
  const firstStart = async (env: Record<string, string> = {}) => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-readme-'))
    dirs.push(dir)
    const server = await startServer(env, { cwd: dir })
    servers.push(server)
    const key = /^ {4}(wdn_[A-Za-z0-9_-]{43})$/m.exec(server.stdout())?.[1]
    if (!key) throw new Error(`the first start printed no key:\n${server.stdout()}`)
    return { server, key, dir }
  }

  /**
   * The proxy session's model: it answers about the first placeholder it was sent, and says it saw
   * none when it was sent none (so a value that reached it unmasked fails the session).
   */
  const modelFor = async () => {
    const upstream = await startUpstreamDouble()
    upstreams.push(upstream)
    upstream.fallback = (request) => {
      const said = JSON.stringify(request.body.messages ?? [])
      const placeholder = /\[[A-Z_]+_\d+\]/.exec(said)?.[0]
      const reply = placeholder ? `We will call you on ${placeholder} today.` : 'I saw no placeholder.'
      return {
        json: completion(reply, {
          id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT',
          model: request.body.model,
          system_fingerprint: 'fp_72eb1c3c4a',
        }),
      }
    }
    return { PROVIDER_OPENAI_BASE_URL: upstream.baseUrl, PROVIDER_OPENAI_API_KEY: 'sk-readme' }
  }

  it('marks the quick start, the tutorial, its agent example and the offline detectors as tested, where a reader meets them', () => {
    expect(Object.fromEntries(sessions.map((name) => [name, pagesOf(name)]))).toEqual({
      quickstart: ['README.md'],
      walkthrough: ['README.md', 'docs/tutorial.md'],
      agents: ['docs/tutorial.md'],
      detectors: ['docs/detectors.md'],
      proxy: ['README.md'],
    })
    for (const block of marked) {
      expect(block.lang, block.where).toBe(block.markers.includes('first-start') ? 'text' : 'sh')
      if (block.markers.includes('first-start')) expect(block.markers, block.where).toEqual(['first-start'])
    }
    // The first start's text is the README's: it is what a newcomer sees first.
    expect(blocksOf('first-start').map((b) => b.where.split(' ')[0])).toEqual(['README.md'])
  })

  it('shows the text the first start prints, with the key it printed', async () => {
    const banner = blocksOf('first-start')[0]
    expect(banner).toBeDefined()
    const { server, key } = await firstStart()
    const shownKey = /wdn_[A-Za-z0-9_-]{43}/.exec(banner?.text ?? '')?.[0] ?? ''
    expect(server.stdout()).toContain(`\n${banner?.text.replaceAll(shownKey, key)}\n`)
  })

  it.each(sessions)('runs its %s session as written, and the server answers what it shows', async (name) => {
    const session = blocksOf(name)
    const { server, key, dir } = await firstStart(name === 'proxy' ? await modelFor() : {})
    const run = await runSh(script(session, server.port), {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', HOME: dir, WARDEN_KEY: key },
    })
    const outputs = perBlock(run.stdout, session.length)
    const statuses = perBlock(run.stderr, session.length).map((err) =>
      err
        .split('\n')
        .filter((l) => l.startsWith(STATUS))
        .map((l) => Number(l.slice(STATUS.length))),
    )
    expect(outputs.length, `the session stopped early:\n${run.stdout}\n${run.stderr}`).toBe(session.length)

    const problems: string[] = []
    session.forEach((block, i) => {
      const where = block.where
      const codes = statuses[i] ?? []
      const shownBlock = block.next && ['http', 'json', 'text'].includes(block.next.lang) ? block.next : null
      const shown = shownBlock ? expectedAnswer(shownBlock) : null
      codes.forEach((code, n) => {
        const last = n === codes.length - 1
        if (last && shown?.status != null) return
        if (code < 200 || code > 299) problems.push(`${where}: request ${n + 1} answered ${code}`)
      })
      if (!shown || !shownBlock) return
      const last = answers(outputs[i] ?? '').at(-1)
      if (!last) {
        problems.push(`${where}: printed nothing`)
        return
      }
      // A body without its headers has the status curl reported.
      if (last.status === null) last.status = codes.at(-1) ?? null
      for (const problem of compare(shown, last, shownBlock.lang)) {
        problems.push(`${where} (its answer at ${shownBlock.where}): ${problem}`)
      }
    })
    expect(problems).toEqual([])
    expect(run.status, run.stderr).toBe(0)
  })
})

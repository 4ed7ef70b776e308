import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * Small guard servers for tests, on 127.0.0.1, answering as each format's documentation shows:
 * an OpenAI-compatible chat server (`/v1/chat/completions`, and `/v1/completions` for
 * ShieldGemma; as vLLM answers, with `logprobs` when asked, or as Ollama's `/v1` does), OpenAI's
 * `/v1/moderations`, and text-embeddings-inference's `/predict`. Each records what it received
 * and answers what the test scripted: an answer, any status and body, or silence.
 */

export interface GuardReceived {
  url: string
  headers: IncomingHttpHeaders
  body: Record<string, any>
}

export type GuardScript =
  /** A JSON answer (default status 200). */
  | { json: unknown; status?: number }
  /** Any body, status and content type. */
  | { raw: string; status?: number; contentType?: string }
  /** Never answers. */
  | { hang: true }
  /** Answers once the promise resolves, with what it resolves to. */
  | { later: Promise<GuardScript> }

export interface GuardDouble {
  /** The root to configure: `http://127.0.0.1:PORT/v1` for the chat and moderation servers, the TEI root for `/predict`. */
  baseUrl: string
  received: GuardReceived[]
  /** Answers the next requests with these, in order; after them, `fallback`. */
  script(...scripts: (GuardScript | ((request: GuardReceived) => GuardScript))[]): void
  fallback: (request: GuardReceived) => GuardScript
  /** Resolves when a caller hangs up before being answered. */
  nextHangUp(): Promise<void>
  close(): Promise<void>
}

/** Starts a double; `root` is appended to its address for `baseUrl` (`/v1` by default, `''` for TEI). */
export async function startGuardDouble(
  fallback: (request: GuardReceived) => GuardScript,
  root = '/v1',
): Promise<GuardDouble> {
  const queue: (GuardScript | ((request: GuardReceived) => GuardScript))[] = []
  const received: GuardReceived[] = []
  const hangUpWaiters: (() => void)[] = []
  const double: GuardDouble = {
    baseUrl: '',
    received,
    script: (...scripts) => queue.push(...scripts),
    fallback,
    nextHangUp: () => new Promise((resolve) => hangUpWaiters.push(resolve)),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  const server = createServer((req, res) => {
    let text = ''
    req.setEncoding('utf8')
    req.on('data', (part: string) => {
      text += part
    })
    req.on('end', () => {
      let body: Record<string, any> = {}
      try {
        body = JSON.parse(text)
      } catch {}
      const request = { url: req.url ?? '', headers: req.headers, body }
      received.push(request)
      const next = queue.shift() ?? double.fallback
      const script = typeof next === 'function' ? next(request) : next
      res.on('close', () => {
        if (!res.writableFinished) for (const waiter of hangUpWaiters.splice(0)) waiter()
      })
      answer(res, script)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  double.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${root}`
  return double
}

function answer(res: ServerResponse, script: GuardScript): void {
  if ('hang' in script) return
  if ('later' in script) {
    void script.later.then((next) => {
      if (!res.destroyed) answer(res, next)
    })
    return
  }
  if ('json' in script) {
    res.writeHead(script.status ?? 200, { 'content-type': 'application/json' })
    res.end(JSON.stringify(script.json))
    return
  }
  res.writeHead(script.status ?? 200, { 'content-type': script.contentType ?? 'application/json' })
  res.end(script.raw)
}

/** A position's alternatives, as `[token, logprob]` pairs, the chosen token first. */
export type Alternatives = [string, number][]

/**
 * A Chat Completions answer as vLLM and OpenAI send it: with `logprobs.content` (each generated
 * token, its log-probability, bytes and `top_logprobs`) when `tokens` are given, else `logprobs: null`.
 */
export function chatAnswer(
  content: string,
  options: { tokens?: Alternatives[]; refusal?: string | null; finishReason?: string } = {},
) {
  const bytes = (token: string) => [...Buffer.from(token, 'utf8')]
  return {
    id: 'chatcmpl-guard',
    object: 'chat.completion',
    created: 1795316060,
    model: 'guard-model',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: options.refusal ? null : content,
          refusal: options.refusal ?? null,
        },
        logprobs: options.tokens
          ? {
              content: options.tokens.map((alternatives) => {
                const [token, logprob] = alternatives[0] as [string, number]
                return {
                  token,
                  logprob,
                  bytes: bytes(token),
                  top_logprobs: alternatives.map(([t, l]) => ({ token: t, logprob: l, bytes: bytes(t) })),
                }
              }),
              refusal: null,
            }
          : null,
        finish_reason: options.finishReason ?? 'stop',
      },
    ],
    usage: { prompt_tokens: 230, completion_tokens: options.tokens?.length ?? 3, total_tokens: 233 },
  }
}

/** A Chat Completions answer as Ollama's OpenAI-compatible endpoint sends it: no `logprobs`, no `refusal`. */
export function ollamaChatAnswer(content: string) {
  return {
    id: 'chatcmpl-512',
    object: 'chat.completion',
    created: 1795316060,
    model: 'llama-guard3:1b',
    system_fingerprint: 'fp_ollama',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 230, completion_tokens: 3, total_tokens: 233 },
  }
}

/** A (legacy) Completions answer as vLLM sends it for `logprobs: N`: `top_logprobs` a token → logprob map per position. */
export function completionAnswer(text: string, top?: Record<string, number>) {
  return {
    id: 'cmpl-guard',
    object: 'text_completion',
    created: 1795316060,
    model: 'google/shieldgemma-2b',
    choices: [
      {
        index: 0,
        text,
        logprobs: top
          ? {
              text_offset: [0],
              token_logprobs: [top[text] ?? Math.max(...Object.values(top))],
              tokens: [text],
              top_logprobs: [top],
            }
          : null,
        finish_reason: 'length',
        stop_reason: null,
      },
    ],
    usage: { prompt_tokens: 180, completion_tokens: 1, total_tokens: 181 },
  }
}

const MODERATION_CATEGORIES = [
  'sexual',
  'sexual/minors',
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'violence',
  'violence/graphic',
] as const

/**
 * OpenAI's moderation answer for one text input (API reference, "The moderation object"):
 * every category with a boolean and a score; the given scores, the rest small. A category is
 * true, and the result flagged, where its score passes 0.5.
 */
export function moderationAnswer(
  scores: Partial<Record<(typeof MODERATION_CATEGORIES)[number], number>> = {},
) {
  const all = Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, scores[c] ?? 0.0001]))
  const categories = Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, (all[c] ?? 0) > 0.5]))
  return {
    id: 'modr-970d409ef3bef3b70c73d8232df86e7d',
    model: 'omni-moderation-latest',
    results: [
      {
        flagged: Object.values(categories).some(Boolean),
        categories,
        category_scores: all,
        category_applied_input_types: Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, ['text']])),
      },
    ],
  }
}

/** TEI's `/predict` answer for one input: labels with softmax scores, highest first. */
export function predictAnswer(scores: Record<string, number>) {
  return Object.entries(scores)
    .map(([label, score]) => ({ score, label }))
    .sort((a, b) => b.score - a.score)
}

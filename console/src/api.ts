// The console's only way to the server: the public /v1 API, with the signed-in key as a bearer
// token. The key lives in sessionStorage, so it is gone when the tab closes, and never in
// localStorage or a cookie (a cookie would also ride along on requests the console did not make).

const KEY_ITEM = 'warden.apiKey'

export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(KEY_ITEM)
  } catch {
    return null
  }
}

export function storeKey(key: string): void {
  sessionStorage.setItem(KEY_ITEM, key)
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY_ITEM)
}

export interface FieldError {
  pointer: string
  detail: string
}

/** An RFC 9457 problem document, as the API sends for every error. */
export interface Problem {
  type?: string
  title?: string
  status?: number
  detail?: string
  code?: string
  request_id?: string
  errors?: FieldError[]
  failures?: unknown[]
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`)
  }

  get code(): string | undefined {
    return this.problem.code
  }

  /** The field errors of a 422, empty otherwise. */
  get fieldErrors(): FieldError[] {
    return this.problem.errors ?? []
  }
}

export interface Answer<T> {
  data: T
  etag: string | null
  status: number
}

export interface RequestOptions {
  body?: unknown
  ifMatch?: string | null
  query?: Record<string, string | number | boolean | null | undefined>
  signal?: AbortSignal
  /** A 401 is this request's own answer (checking a key at sign-in), not a reason to sign out. */
  expectUnauthenticated?: boolean
}

/** Called when the server refuses the key (401): the app signs out and says why. */
let onUnauthenticated: (message: string) => void = () => {}
export function setUnauthenticatedHandler(handler: (message: string) => void): void {
  onUnauthenticated = handler
}

export function path(...segments: string[]): string {
  return segments.map((s) => encodeURIComponent(s)).join('/')
}

/** Sends one API request and parses its answer; any status over 299 throws an ApiError. */
export async function request<T>(
  method: string,
  url: string,
  options: RequestOptions = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { accept: 'application/json' }
  const key = storedKey()
  if (key) headers.authorization = `Bearer ${key}`
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  if (options.ifMatch) headers['if-match'] = options.ifMatch
  let target = url
  if (options.query) {
    const params = new URLSearchParams()
    for (const [name, value] of Object.entries(options.query)) {
      if (value !== undefined && value !== null && value !== '') params.set(name, String(value))
    }
    const text = params.toString()
    if (text) target += `?${text}`
  }
  let response: Response
  try {
    response = await fetch(target, {
      method,
      headers,
      body: options.body === undefined ? null : JSON.stringify(options.body),
      signal: options.signal ?? null,
      credentials: 'omit',
      cache: 'no-store',
    })
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error
    throw new ApiError(0, { title: 'Network error', detail: 'The server could not be reached.' })
  }
  const text = await response.text()
  let parsed: unknown = null
  if (text) {
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = null
    }
  }
  if (!response.ok) {
    const problem: Problem =
      parsed && typeof parsed === 'object' ? (parsed as Problem) : { status: response.status, detail: text }
    const error = new ApiError(response.status, problem)
    if (response.status === 401 && !options.expectUnauthenticated) onUnauthenticated(error.message)
    throw error
  }
  return { data: parsed as T, etag: response.headers.get('etag'), status: response.status }
}

export const api = {
  get: <T>(url: string, options?: RequestOptions) => request<T>('GET', url, options),
  post: <T>(url: string, body: unknown, options?: RequestOptions) =>
    request<T>('POST', url, { ...options, body }),
  patch: <T>(url: string, body: unknown, options?: RequestOptions) =>
    request<T>('PATCH', url, { ...options, body }),
  delete: (url: string, options?: RequestOptions) => request<null>('DELETE', url, options),
}

export interface Page<T> {
  data: T[]
  next_cursor: string | null
}

/**
 * True when the server has no such endpoint: 404 for an unknown path, 405 for a known path
 * without this method (GET on an evaluations path that only takes POST). Pages for features a
 * server may not have yet say so instead of failing.
 */
export function isMissingEndpoint(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 404 || error.status === 405)
}

export function describe(error: unknown): string {
  if (error instanceof ApiError) {
    const id = error.problem.request_id ? ` (request ${error.problem.request_id})` : ''
    return `${error.message}${id}`
  }
  return error instanceof Error ? error.message : String(error)
}

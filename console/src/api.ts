// The console's only way to the server: the public /v1 API through the typed client,
// @warden/client (clients/typescript), whose types are generated from the server's OpenAPI
// document, with the signed-in key as a bearer token. The key lives in sessionStorage, so it is
// gone when the tab closes, and never in localStorage or a cookie (a cookie would also ride
// along on requests the console did not make).
import { type components, createWardenClient, type operations } from '@warden/client'

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

// The API's shapes, by the names the pages use: every one is the generated type of the document.
type Schemas = components['schemas']
export type Problem = Schemas['Problem']
export type FieldError = NonNullable<Problem['errors']>[number]
export type Application = Schemas['Application']
export type Policy = Schemas['Policy']
export type PolicyRule = Schemas['PolicyRule']
export type RuleType = PolicyRule['type']
export type Target = Policy['target'][number]
export type Evaluation = Schemas['Evaluation']
export type LoggedEvaluation = Schemas['LoggedEvaluation']
export type PolicyResult = Evaluation['policies'][number]
export type RuleResult = PolicyResult['rules'][number]
export type Finding = RuleResult['findings'][number]
export type Message = NonNullable<Evaluation['redacted']>['messages'][number]
export type TestCase = Schemas['PolicyTest']
export type TestResult = Schemas['PolicyTestResult']
export type TestRun = Schemas['PolicyTestRun']
export type ApiKey = Schemas['ApiKey']
export type ApiKeyCreated = Schemas['ApiKeyCreated']

/** The JSON body of an operation's 200 answer: `Listed<'listPolicies'>` is a page of policies. */
export type Listed<Op extends keyof operations> = operations[Op]['responses'] extends {
  200: { content: { 'application/json': infer T } }
}
  ? T
  : never

/** The query parameters an operation takes. */
export type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>

/** The JSON body an operation takes. */
export type Body<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { 'application/json': infer T } }
}
  ? T
  : never

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Partial<Problem>,
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

/**
 * What the console finds wrong in a form before sending it, shown like the API's field errors:
 * beside the field each pointer names, and in the summary at the top.
 */
export class FormError extends Error {
  constructor(readonly fieldErrors: FieldError[]) {
    super('Fix the fields marked below.')
  }
}

/** The field errors of a failed save, the API's (a 422) or the form's own; none otherwise. */
export function fieldErrorsOf(error: unknown): FieldError[] {
  return error instanceof ApiError || error instanceof FormError ? error.fieldErrors : []
}

/** Called when the server refuses the key (401): the app signs out and says why. */
let onUnauthenticated: (message: string) => void = () => {}
export function setUnauthenticatedHandler(handler: (message: string) => void): void {
  onUnauthenticated = handler
}

/** The API client. The key is read for every request, so signing in and out takes effect at once. */
export const warden = createWardenClient({
  baseUrl: location.origin,
  apiKey: storedKey,
  credentials: 'omit',
  cache: 'no-store',
})

export interface Answer<T> {
  data: T
  etag: string | null
  status: number
}

/**
 * Awaits a request of `warden`: a 2xx answer is its data and ETag; anything else throws an
 * ApiError, status 0 when the server could not be reached. A 401 also signs out, unless it is the
 * request's own expected answer (checking a key at sign-in).
 */
export async function answer<T>(
  sent: Promise<{ data?: T; error?: unknown; response: Response }>,
  options: { expectUnauthenticated?: boolean } = {},
): Promise<Answer<T>> {
  let result: Awaited<typeof sent>
  try {
    result = await sent
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error
    throw new ApiError(0, { title: 'Network error', detail: 'The server could not be reached.' })
  }
  const { response } = result
  if (!response.ok) {
    const body = result.error
    const problem: Partial<Problem> =
      body && typeof body === 'object'
        ? (body as Partial<Problem>)
        : { status: response.status, detail: typeof body === 'string' ? body : '' }
    const error = new ApiError(response.status, problem)
    if (response.status === 401 && !options.expectUnauthenticated) onUnauthenticated(error.message)
    throw error
  }
  return { data: result.data as T, etag: response.headers.get('etag'), status: response.status }
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

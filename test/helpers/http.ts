/** What a server answered: the status, the headers, and the body as sent and as JSON (null when empty). */
export interface Answer {
  status: number
  headers: Headers
  text: string
  body: any
}

/**
 * Sends one request to a spawned server as a client would: `key` as the bearer token, `body` (if
 * any) as JSON, then `headers`, which may add to or replace those.
 */
export async function call(
  url: string,
  method: string,
  key: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null }
}

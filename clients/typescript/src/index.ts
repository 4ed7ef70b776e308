import createClient, { type Client, type ClientOptions } from 'openapi-fetch'
import type { paths } from './schema.js'

// The API's types (`paths`, `components`, `operations`) and, for each enum of the document's
// components, its values as an array: `policyRuleTypeValues`, `policyTargetValues`, ...
export * from './schema.js'

export interface WardenClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where Warden listens, e.g. `http://127.0.0.1:8080`; requests go to its `/v1/...` paths. */
  baseUrl: string
  /**
   * The API key, sent as `Authorization: Bearer <key>`; or a function that returns it for each
   * request (for a key that changes, such as a web page's sign-in). Without one, no key is sent.
   */
  apiKey?: string | (() => string | null | undefined)
}

/** A client of every operation of the Warden API, typed by its OpenAPI document. */
export type WardenClient = Client<paths>

/**
 * A Warden API client: `GET`, `POST`, `PATCH` and `DELETE` take a path of the API as its
 * OpenAPI document writes it (`/v1/applications/{application_id}`) with its parameters and body,
 * and resolve to `{ data, error, response }`: `data` is the answer on success, `error` the
 * problem+json document otherwise. Anything else in the options goes to openapi-fetch's
 * `createClient` (`fetch`, `headers`, `credentials`, ...).
 */
export function createWardenClient({ apiKey, ...options }: WardenClientOptions): WardenClient {
  const client = createClient<paths>(options)
  if (apiKey !== undefined) {
    client.use({
      onRequest({ request }) {
        const key = typeof apiKey === 'function' ? apiKey() : apiKey
        if (key) request.headers.set('Authorization', `Bearer ${key}`)
        return request
      },
    })
  }
  return client
}

import type { ProviderDirectory, ProviderUpstream } from '../config.js'
import { invalid, pointerToken } from '../errors.js'

type Json = Record<string, unknown>

/** The fields set aside from each request's body, until its service knows the provider. */
const setAside = new WeakMap<object, Json>()

/**
 * A preValidation step for a guarded route (chat completions, responses): the top-level fields
 * of the body that some provider takes beyond OpenAI's API (PROVIDER_<NAME>_EXTRA_FIELDS) and
 * that the route's schema does not know are set aside, so that the schema, strict about
 * unknown fields, reads the rest. Which provider the application uses is known only once it is
 * read: `extraFieldsFor` then passes on the fields that provider takes and refuses any other
 * (422 naming it, as the schema would have).
 */
export function setAsideExtraFields(
  providers: Pick<ProviderDirectory, 'extraFields'>,
  known: ReadonlySet<string>,
) {
  return async (request: { body: unknown }): Promise<void> => {
    const { body } = request
    if (providers.extraFields.size === 0) return
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return
    const extra: Json = {}
    let any = false
    for (const name of Object.keys(body)) {
      if (known.has(name) || !providers.extraFields.has(name)) continue
      extra[name] = (body as Json)[name]
      delete (body as Json)[name]
      any = true
    }
    if (any) setAside.set(body, extra)
  }
}

/**
 * The fields set aside from `body` that `upstream` takes, to be sent with the request; 422 naming
 * the first field it does not take ("is not a known field", as for any unknown field).
 */
export function extraFieldsFor(body: object, upstream: Pick<ProviderUpstream, 'extraFields'>): Json {
  const extra = setAside.get(body)
  if (extra === undefined) return {}
  const unknown = Object.keys(extra).filter((name) => !upstream.extraFields.has(name))
  if (unknown.length > 0)
    throw invalid(
      unknown.map((name) => ({ pointer: `/${pointerToken(name)}`, detail: 'is not a known field' })),
    )
  return extra
}

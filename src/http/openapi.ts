import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { type TSchema, Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { PROBLEMS } from '../errors.js'
import { RULE_TYPE_MODULES } from '../rules/rule-types/registry.js'
import type { RuleForm } from '../rules/rule-types/rule-type.js'
import { ProblemSchema } from '../schemas/common.js'

const problemRef = Type.Ref(ProblemSchema)

const errorDescriptions: Record<number, string> = {
  400: 'The body is not parseable JSON, or not a JSON object (malformed_request).',
  401: 'No, malformed, unknown, revoked or expired API key (unauthenticated).',
  403: 'The API key lacks the scope this operation needs (forbidden).',
  404: "No such route, or no such record in the caller's workspace (not_found).",
  409: 'The id already exists, or the idempotency key is in use (conflict).',
  412: 'If-Match does not match the current ETag (precondition_failed).',
  413: 'The body is larger than the route’s limit: 1 MiB (BODY_LIMIT_BYTES), 20 MiB for evaluations and chat completions (payload_too_large).',
  415: 'The body is not JSON (unsupported_media_type).',
  422: 'The body, query or path fails validation; `errors` lists every problem, or for a body of 256 KiB or more refused as it arrived (an array past its limit), that array (validation_error).',
  429: 'The rate limit was hit; see Retry-After (rate_limited).',
  500: 'An unexpected error; the details are in the server log under the request id (internal_error).',
  502: 'The model provider could not be reached, or answered an error or something that is not a completion (upstream_error).',
  503: 'The store is unavailable, or the request bodies in flight (the workspace’s, or all of them) would pass their budget; retry after Retry-After seconds (unavailable).',
  504: 'The model provider did not answer within PROVIDER_TIMEOUT_MS (upstream_timeout).',
}

/** The shared problem+json answers, for an operation's `response` map. */
export function errorResponses(...statuses: number[]): Record<number, object> {
  return problemResponses(problemRef, statuses)
}

/** The problem+json answers of `statuses`, each in the document `schema` describes. */
export function problemResponses(schema: TSchema, statuses: readonly number[]): Record<number, object> {
  const out: Record<number, object> = {}
  for (const status of statuses) {
    const title = Object.values(PROBLEMS).find((p) => p.status === status)?.title ?? 'Error'
    out[status] = {
      description: errorDescriptions[status] ?? title,
      content: { 'application/problem+json': { schema } },
    }
  }
  return out
}

/** Answers every authenticated operation may give. */
export const AUTH_ERRORS = [401, 403, 429, 500, 503] as const

const etagHeader = {
  type: 'string',
  description: 'Entity tag of this version of the resource, for If-Match.',
  examples: ['"3q2-7wEAAAAFUw1k"'],
}

/** A JSON success answer with the resource's ETag (and, for a create, its Location). */
export function resourceResponse(schema: TSchema, description: string, options: { location?: boolean } = {}) {
  const headers: Record<string, object> = { ETag: etagHeader }
  if (options.location) {
    headers.Location = {
      type: 'string',
      description: 'Path of the new resource.',
      examples: ['/v1/applications/support-bot'],
    }
  }
  return { description, headers, content: { 'application/json': { schema } } }
}

/**
 * The OpenAPI document's `x-rule-types`: for each rule type, its form's fields (the labels of
 * `value` and `threshold`, what `flagged` lists, whether it may name a `detector`: the offline
 * model, the judge, or a guard detector; whether it may mask its findings, `mask`; what its
 * `allowed` values do, `allowed`: `findings` or `text`) and what a rule of it passes on, in the
 * registry's order.
 */
export function ruleTypeForms(): Record<
  string,
  RuleForm & { detector?: true; mask?: true; allowed?: 'findings' | 'text' }
> {
  return Object.fromEntries(
    Object.values(RULE_TYPE_MODULES).map(
      ({ type, form: { about, ...fields }, detectorChoice, guardChoice, masks, allows }) => [
        type,
        {
          ...fields,
          ...(detectorChoice || guardChoice ? { detector: true as const } : {}),
          ...(masks ? { mask: true as const } : {}),
          ...(allows ? { allowed: allows } : {}),
          about,
        },
      ],
    ),
  )
}

const LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" width="160" height="40" viewBox="0 0 160 40"><text x="0" y="29" font-family="Helvetica, Arial, sans-serif" font-size="26" font-weight="700" fill="#ffffff">Warden</text></svg>'

/** Registers shared schemas, the OpenAPI 3.1 document at /openapi.json, and the docs UI at /docs. */
export async function installOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Warden API',
        version,
        description:
          'Warden stores applications (an LLM-backed product: provider, model, generation parameters) and their guardrail policies. Every /v1 request needs `Authorization: Bearer <API key>`. Errors are RFC 9457 problem+json with a stable `code`.',
      },
      servers: [{ url: '/', description: 'This server' }],
      tags: [
        { name: 'applications', description: 'LLM-backed applications.' },
        { name: 'policies', description: 'Guardrail policies of an application, with their revisions.' },
        { name: 'api-keys', description: 'API keys of the workspace; needs the admin scope.' },
        { name: 'operations', description: 'Health, readiness and this document; no key needed.' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key (wdn_...), sent as Authorization: Bearer <key>.',
          },
        },
      },
      security: [{ bearerAuth: [] }],
    },
    // OpenAPI 3.1 lets a bearer requirement name roles: each operation states the scope it needs,
    // taken from the same route config that the auth hook enforces.
    transform: ({ schema, url, route }) => {
      const scope = (route.config as { scope?: string } | undefined)?.scope
      return { schema: scope ? { ...schema, security: [{ bearerAuth: [scope] }] } : schema, url }
    },
    // What each rule type reads and says, from its module (src/rules/rule-types/): the console's
    // form is built from this, through the typed client's `ruleTypeForms`.
    transformObject: (document) =>
      'openapiObject' in document
        ? { ...document.openapiObject, 'x-rule-types': ruleTypeForms() }
        : document.swaggerObject,
    refResolver: {
      // Name components after their $id (Application, Policy, Problem) instead of def-0, def-1.
      buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`),
    },
  })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { deepLinking: true, docExpansion: 'list', validatorUrl: null },
    logo: { type: 'image/svg+xml', content: Buffer.from(LOGO), href: '/docs/', target: '_self' },
    staticCSP: true,
  } as never)
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TOXICITY_CATEGORIES } from '../../src/rules/detectors/toxicity.js'
import { PII_KINDS } from '../../src/schemas/policies.js'
import { createTestApp, type TestApp } from '../helpers/app.js'

type Schema = Record<string, unknown> & { properties?: Record<string, Schema>; items?: Schema; $ref?: string }
type Doc = {
  openapi: string
  paths: Record<string, Record<string, Record<string, unknown>>>
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, unknown> }
}

/** Every property of every object schema, with its path, following $refs once. */
function fields(
  doc: Doc,
  schema: Schema | undefined,
  path: string,
  seen = new Set<string>(),
): [string, Schema][] {
  if (!schema) return []
  if (schema.$ref) {
    const name = schema.$ref.split('/').pop() ?? ''
    if (seen.has(name)) return []
    seen.add(name)
    return fields(doc, doc.components.schemas[name], `${path}(${name})`, seen)
  }
  const out: [string, Schema][] = []
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    out.push([`${path}.${name}`, property], ...fields(doc, property, `${path}.${name}`, seen))
  }
  if (schema.items) out.push(...fields(doc, schema.items, `${path}[]`, seen))
  return out
}

describe('GET /openapi.json', () => {
  let t: TestApp
  let doc: Doc
  beforeAll(async () => {
    t = await createTestApp('sqlite')
    const res = await t.request({ method: 'GET', url: '/openapi.json', key: null })
    expect(res.statusCode).toBe(200)
    doc = res.json()
  })
  afterAll(async () => {
    await t.close()
  })

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ path, method, op: op as Record<string, any> })),
    )

  it('is OpenAPI 3.1 with a bearer security scheme', () => {
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
  })

  it("publishes each rule type's form as x-rule-types, for every type the schema names", () => {
    const forms = (doc as Doc & { 'x-rule-types': Record<string, Record<string, unknown>> })['x-rule-types']
    const ruleType = doc.components.schemas.PolicyRule?.properties?.type as { enum?: string[] } | undefined
    expect(Object.keys(forms).sort()).toEqual([...(ruleType?.enum ?? [])].sort())
    expect(forms.length).toEqual({
      value: 'Maximum length (characters)',
      about: 'Passes when the text is at most this long.',
    })
    expect(forms.toxicity).toMatchObject({
      threshold: expect.any(String),
      flagged: 'toxicity',
      detector: true,
    })
    expect(forms.prompt_injection?.detector).toBe(true)
    // custom names a guard detector that follows a policy (docs/guards.md).
    expect(forms.custom?.detector).toBe(true)
    expect(forms.pii).not.toHaveProperty('detector')
    // Which types may mask their findings, and what their allowed values do (docs/masking.md).
    expect(Object.keys(forms).filter((type) => forms[type]?.mask === true)).toEqual([
      'pii',
      'keywords',
      'regex',
    ])
    expect(Object.fromEntries(Object.entries(forms).map(([type, form]) => [type, form.allowed]))).toEqual({
      factuality: undefined,
      relevance: undefined,
      toxicity: 'text',
      prompt_injection: 'text',
      pii: 'findings',
      keywords: 'findings',
      regex: 'findings',
      length: undefined,
      custom: undefined,
    })
    for (const form of Object.values(forms)) expect(typeof form.about).toBe('string')
  })

  it('documents both operations of the specification on their exact paths', () => {
    expect(doc.paths['/v1/applications']?.post?.operationId).toBe('createApplication')
    expect(doc.paths['/v1/applications/{application_id}/policies']?.post?.operationId).toBe('createPolicy')
  })

  it('gives every operation an operationId, a summary, tags and an explicit security', () => {
    const ids = new Set<string>()
    for (const { path, method, op } of operations()) {
      expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z]+$/)
      expect(ids.has(op.operationId)).toBe(false)
      ids.add(op.operationId)
      expect(op.summary, `${method} ${path}`).toBeTruthy()
      expect(op.tags?.length, `${method} ${path}`).toBeGreaterThan(0)
      if (path.startsWith('/v1/')) {
        expect(op.security, `${method} ${path}`).toEqual([
          {
            bearerAuth: [expect.stringMatching(/^(applications|policies|evaluations):(read|write)$|^admin$/)],
          },
        ])
      } else expect(op.security).toEqual([])
    }
  })

  it('lists the shared problem+json answers on every /v1 operation', () => {
    for (const { path, method, op } of operations().filter((o) => o.path.startsWith('/v1/'))) {
      // The OpenAI-compatible routes' problems also carry OpenAI's error member.
      const problem = /\/(chat\/completions|responses|models)$/.test(path)
        ? 'ChatCompletionProblem'
        : 'Problem'
      for (const status of ['401', '403', '422', '429', '500', '503']) {
        expect(
          op.responses[status]?.content?.['application/problem+json']?.schema?.$ref,
          `${method} ${path} ${status}`,
        ).toBe(`#/components/schemas/${problem}`)
      }
      const created = op.responses['201']
      if (created) expect(Object.keys(created.headers ?? {})).toContain('Location')
      if (created && !path.startsWith('/v1/api-keys'))
        expect(Object.keys(created.headers).sort()).toEqual(['ETag', 'Location'])
    }
  })

  it('documents OpenAI’s error member on every error of the chat completions route', () => {
    const op = doc.paths['/v1/applications/{application_id}/chat/completions']?.post as Record<string, any>
    const errors = Object.entries(op.responses as Record<string, any>).filter(
      ([status]) => Number(status) >= 400,
    )
    expect(errors.map(([status]) => status).sort()).toEqual([
      '400',
      '401',
      '403',
      '404',
      '413',
      '415',
      '422',
      '429',
      '500',
      '502',
      '503',
      '504',
    ])
    for (const [status, response] of errors)
      expect(response.content['application/problem+json'].schema.$ref, status).toBe(
        '#/components/schemas/ChatCompletionProblem',
      )
    const schema = doc.components.schemas.ChatCompletionProblem as Schema & { required: string[] }
    const problem = doc.components.schemas.Problem as Schema
    expect(Object.keys(schema.properties ?? {})).toEqual([
      ...Object.keys(problem.properties ?? {}).filter((name) => name !== 'failures'),
      'error',
    ])
    expect(schema.required).toContain('error')
    expect(Object.keys(schema.properties?.error?.properties ?? {})).toEqual([
      'message',
      'type',
      'param',
      'code',
    ])
  })

  it('names the values of a pii and a toxicity rule’s flagged list, for clients to list', () => {
    expect(doc.components.schemas.PiiKind).toMatchObject({ type: 'string', enum: [...PII_KINDS] })
    expect(doc.components.schemas.ToxicityCategory).toMatchObject({
      type: 'string',
      enum: [...TOXICITY_CATEGORIES],
    })
  })

  it('describes every field, with an example, in requests and responses', () => {
    const missing: string[] = []
    for (const { path, method, op } of operations()) {
      const body = op.requestBody?.content?.['application/json']?.schema
      const responses = Object.entries(op.responses ?? {}).map(
        ([status, r]) => [status, Object.values((r as any).content ?? {})[0]] as const,
      )
      const all = [
        ...fields(doc, body, `${method} ${path} body`),
        ...responses.flatMap(([status, media]) =>
          fields(doc, (media as any)?.schema, `${method} ${path} ${status}`),
        ),
      ]
      for (const [where, schema] of all) {
        if (schema.$ref) continue
        if (!schema.description) missing.push(`${where}: description`)
        if (!Array.isArray(schema.examples) || schema.examples.length === 0)
          missing.push(`${where}: examples`)
      }
      for (const param of op.parameters ?? []) {
        if (!param.description && !param.schema?.description)
          missing.push(`${method} ${path} ${param.name}: description`)
      }
    }
    expect(missing).toEqual([])
  })

  it('answers 405 with the right Allow header on every documented path', async () => {
    const all = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']
    for (const [path, methods] of Object.entries(doc.paths)) {
      const allowed = Object.keys(methods).map((m) => m.toUpperCase())
      const url = path.replace(/\{[^}]+\}/g, '1')
      for (const method of all.filter((m) => !allowed.includes(m))) {
        const res = await t.request({ method: method as 'PUT', url, key: null })
        expect(res.statusCode, `${method} ${path}`).toBe(405)
        expect(res.json().code).toBe('method_not_allowed')
        const allow = String(res.headers.allow).split(', ')
        for (const m of allowed) expect(allow, `${method} ${path}`).toContain(m)
        if (allowed.includes('GET')) expect(allow).toContain('HEAD')
      }
    }
  })

  it('serves the interactive reference from the installed package, without a CDN', async () => {
    const page = await t.request({ method: 'GET', url: '/docs/', key: null })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toContain('text/html')
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '')
    expect(assets.length).toBeGreaterThan(0)
    for (const asset of assets) {
      expect(asset).not.toMatch(/^(https?:)?\/\//)
      const res = await t.request({
        method: 'GET',
        url: new URL(asset, 'http://x/docs/').pathname,
        key: null,
      })
      expect(res.statusCode, asset).toBe(200)
    }
  })
})

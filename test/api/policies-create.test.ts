import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PII_KINDS } from '../../src/schemas/policies.js'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'

const url = (app = 'bot') => `/v1/applications/${app}/policies`

describe.each(STORE_KINDS)('POST /v1/applications/{application_id}/policies (%s)', (kind) => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp(kind)
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'bot', name: 'Bot', description: '' },
    })
    expect(res.statusCode).toBe(201)
  })
  afterAll(async () => {
    await t.close()
  })

  const create = (payload: unknown, options: { app?: string; key?: string } = {}) =>
    t.request({ method: 'POST', url: url(options.app), payload: payload as object, key: options.key })
  let n = 0
  const policy = (rules: unknown[], extra: Record<string, unknown> = {}) => ({
    id: `p${++n}`,
    rules,
    target: ['output'],
    ...extra,
  })

  it('creates a policy at revision 1 with every field, Location and ETag', async () => {
    const before = Math.floor(Date.now() / 1000)
    const res = await create({
      id: 'no-pii',
      rules: [
        { type: 'factuality', expected: 'pass', threshold: 0.7 },
        { type: 'pii', flagged: ['email', 'credit_card'] },
        { type: 'keywords', expected: 'fail', flagged: ['password'] },
      ],
      target: ['input', 'output'],
      definition: 'Never leak contact details.',
      override_response: 'Sorry, I cannot share that.',
    })
    expect(res.statusCode).toBe(201)
    expect(res.headers.location).toBe('/v1/applications/bot/policies/no-pii')
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
    const body = res.json()
    expect(body).toEqual({
      id: 'no-pii',
      application_id: 'bot',
      rules: [
        { type: 'factuality', expected: 'pass', value: null, threshold: 0.7, flagged: null },
        { type: 'pii', expected: 'pass', value: null, threshold: null, flagged: ['email', 'credit_card'] },
        { type: 'keywords', expected: 'fail', value: null, threshold: null, flagged: ['password'] },
      ],
      target: ['input', 'output'],
      definition: 'Never leak contact details.',
      override_response: 'Sorry, I cannot share that.',
      mode: 'enforce',
      on_error: 'fail_closed',
      revision: 1,
      created: body.created,
      updated: body.created,
    })
    expect(body.created).toBeGreaterThanOrEqual(before)
  })

  it('shows expected as pass when absent or null, and unset fields as null', async () => {
    const res = await create(policy([{ type: 'relevance' }, { type: 'toxicity', expected: null }]))
    expect(res.statusCode).toBe(201)
    const body = res.json()
    expect(body.rules).toEqual([
      { type: 'relevance', expected: 'pass', value: null, threshold: null, flagged: null },
      { type: 'toxicity', expected: 'pass', value: null, threshold: null, flagged: null },
    ])
    expect(body.definition).toBeNull()
    expect(body.override_response).toBeNull()
  })

  it('keeps value, threshold and flagged where a type does not use them', async () => {
    const res = await create(policy([{ type: 'factuality', value: 'note', flagged: ['x'], threshold: 0 }]))
    expect(res.statusCode).toBe(201)
    expect(res.json().rules[0]).toEqual({
      type: 'factuality',
      expected: 'pass',
      value: 'note',
      threshold: 0,
      flagged: ['x'],
    })
  })

  it('accepts, type-checks and ignores the read-only fields', async () => {
    const res = await create(
      policy([{ type: 'relevance' }], { application_id: 'elsewhere', revision: 9, created: 1, updated: 2 }),
    )
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({ application_id: 'bot', revision: 1 })
    expect(res.json().created).toBeGreaterThan(2)
    const bad = problem(
      await create(policy([{ type: 'relevance' }], { revision: 'one', application_id: 5 })),
      422,
      'validation_error',
    )
    expect(bad.errors).toEqual([
      { pointer: '/application_id', detail: 'must be a string or null' },
      { pointer: '/revision', detail: 'must be an integer or null' },
    ])
  })

  it.each([
    ['factuality', { type: 'factuality' }],
    ['relevance', { type: 'relevance', threshold: 1 }],
    ['toxicity with categories', { type: 'toxicity', flagged: ['hate', 'violence'], threshold: 0.2 }],
    ['prompt_injection', { type: 'prompt_injection' }],
    ['pii without flagged (all kinds)', { type: 'pii' }],
    [
      'pii with every kind',
      { type: 'pii', flagged: ['email', 'phone', 'credit_card', 'iban', 'ssn', 'ip_address', 'api_key'] },
    ],
    ['keywords', { type: 'keywords', flagged: ['refund', 'lawsuit'] }],
    ['regex', { type: 'regex', value: '\\b\\d{3}-\\d{2}-\\d{4}\\b' }],
    ['regex with (?i)', { type: 'regex', value: '(?i)confidential' }],
    ['length at the low edge', { type: 'length', value: '1' }],
    ['length at the high edge', { type: 'length', value: '10000000' }],
  ])('accepts a %s rule', async (_name, rule) => {
    const res = await create(policy([rule]))
    expect(res.statusCode, res.body).toBe(201)
  })

  it('accepts a custom rule with a definition', async () => {
    const res = await create(policy([{ type: 'custom' }], { definition: 'Stay on the topic of cooking.' }))
    expect(res.statusCode).toBe(201)
  })

  it.each([
    [
      'id is required',
      { rules: [{ type: 'factuality' }], target: ['output'] },
      [{ pointer: '/id', detail: 'is required' }],
    ],
    ['rules are required', { id: 'x', target: ['output'] }, [{ pointer: '/rules', detail: 'is required' }]],
    [
      'target is required',
      { id: 'x', rules: [{ type: 'factuality' }] },
      [{ pointer: '/target', detail: 'is required' }],
    ],
    [
      'rules may not be empty',
      { id: 'x', rules: [], target: ['output'] },
      [{ pointer: '/rules', detail: 'must not be empty' }],
    ],
    [
      'rules may not be null',
      { id: 'x', rules: null, target: ['output'] },
      [{ pointer: '/rules', detail: 'must be an array' }],
    ],
    [
      'at most 64 rules',
      { id: 'x', rules: Array(65).fill({ type: 'relevance' }), target: ['output'] },
      [{ pointer: '/rules', detail: 'must have at most 64 items' }],
    ],
    [
      'target may not be empty',
      { id: 'x', rules: [{ type: 'relevance' }], target: [] },
      [{ pointer: '/target', detail: 'must not be empty' }],
    ],
    [
      'target values are known',
      { id: 'x', rules: [{ type: 'relevance' }], target: ['prompt'] },
      [{ pointer: '/target/0', detail: 'must be one of: input, output, user, assistant, system, context' }],
    ],
    [
      'target values are distinct',
      { id: 'x', rules: [{ type: 'relevance' }], target: ['input', 'input'] },
      [{ pointer: '/target', detail: 'must not repeat an item (items 0 and 1 are equal)' }],
    ],
    [
      'a rule type is required',
      { id: 'x', rules: [{}], target: ['output'] },
      [{ pointer: '/rules/0/type', detail: 'is required' }],
    ],
    [
      'a rule type is known',
      { id: 'x', rules: [{ type: 'sentiment' }], target: ['output'] },
      [
        {
          pointer: '/rules/0/type',
          detail: expect.stringMatching(/^must be one of: factuality, relevance, /),
        },
      ],
    ],
    [
      'expected is pass or fail',
      { id: 'x', rules: [{ type: 'relevance', expected: 'maybe' }], target: ['output'] },
      [{ pointer: '/rules/0/expected', detail: 'must be one of: pass, fail' }],
    ],
    [
      'threshold at most 1',
      { id: 'x', rules: [{ type: 'relevance', threshold: 1.01 }], target: ['output'] },
      [{ pointer: '/rules/0/threshold', detail: 'must be at most 1' }],
    ],
    [
      'threshold at least 0',
      { id: 'x', rules: [{ type: 'toxicity', threshold: -1 }], target: ['output'] },
      [{ pointer: '/rules/0/threshold', detail: 'must be at least 0' }],
    ],
    [
      'a misspelt rule field',
      { id: 'x', rules: [{ type: 'relevance', treshold: 0.5 }], target: ['output'] },
      [{ pointer: '/rules/0/treshold', detail: 'is not a known field' }],
    ],
    [
      'flagged may not be empty',
      { id: 'x', rules: [{ type: 'keywords', flagged: [] }], target: ['output'] },
      [{ pointer: '/rules/0/flagged', detail: 'must not be empty' }],
    ],
    [
      'flagged items are distinct',
      { id: 'x', rules: [{ type: 'keywords', flagged: ['a', 'a'] }], target: ['output'] },
      [{ pointer: '/rules/0/flagged', detail: 'must not repeat an item (items 0 and 1 are equal)' }],
    ],
    [
      'flagged items are not empty',
      { id: 'x', rules: [{ type: 'keywords', flagged: [''] }], target: ['output'] },
      [{ pointer: '/rules/0/flagged/0', detail: 'must not be empty' }],
    ],
    [
      'flagged items are at most 256 characters',
      { id: 'x', rules: [{ type: 'keywords', flagged: ['k'.repeat(257)] }], target: ['output'] },
      [{ pointer: '/rules/0/flagged/0', detail: 'must be at most 256 characters' }],
    ],
    [
      'at most 1,000 flagged items',
      {
        id: 'x',
        rules: [{ type: 'keywords', flagged: Array.from({ length: 1001 }, (_, i) => `w${i}`) }],
        target: ['output'],
      },
      [{ pointer: '/rules/0/flagged', detail: 'must have at most 1000 items' }],
    ],
    [
      'value at most 20,000 characters',
      { id: 'x', rules: [{ type: 'regex', value: 'a'.repeat(20_001) }], target: ['output'] },
      [{ pointer: '/rules/0/value', detail: 'must be at most 20000 characters' }],
    ],
    [
      'definition may not be empty',
      { id: 'x', rules: [{ type: 'relevance' }], target: ['output'], definition: '' },
      [{ pointer: '/definition', detail: 'must not be empty' }],
    ],
    [
      'override_response at most 20,000',
      { id: 'x', rules: [{ type: 'relevance' }], target: ['output'], override_response: 'o'.repeat(20_001) },
      [{ pointer: '/override_response', detail: 'must be at most 20000 characters' }],
    ],
    [
      'an unknown policy field',
      { id: 'x', rules: [{ type: 'relevance' }], target: ['output'], severity: 'high' },
      [{ pointer: '/severity', detail: 'is not a known field' }],
    ],
    [
      'an invalid policy id',
      { id: '~x', rules: [{ type: 'relevance' }], target: ['output'] },
      [{ pointer: '/id', detail: expect.stringContaining('1 to 128') }],
    ],
    // Requirements per rule type.
    [
      'keywords without flagged',
      { id: 'x', rules: [{ type: 'keywords' }], target: ['output'] },
      [{ pointer: '/rules/0/flagged', detail: expect.stringContaining('is required for a keywords rule') }],
    ],
    [
      'pii with an unknown kind',
      { id: 'x', rules: [{ type: 'pii', flagged: ['email', 'passport'] }], target: ['output'] },
      [
        {
          pointer: '/rules/0/flagged/1',
          detail: `must be one of: ${PII_KINDS.join(', ')}`,
        },
      ],
    ],
    [
      'regex without a value',
      { id: 'x', rules: [{ type: 'regex' }], target: ['output'] },
      [{ pointer: '/rules/0/value', detail: expect.stringContaining('is required for a regex rule') }],
    ],
    [
      'regex that does not compile',
      { id: 'x', rules: [{ type: 'regex', value: '(unclosed' }], target: ['output'] },
      [{ pointer: '/rules/0/value', detail: expect.stringContaining('is not a valid RE2 pattern') }],
    ],
    [
      'regex with a backreference',
      { id: 'x', rules: [{ type: 'regex', value: '(a)\\1' }], target: ['output'] },
      [{ pointer: '/rules/0/value', detail: expect.stringContaining('is not a valid RE2 pattern') }],
    ],
    [
      'regex with a lookahead',
      { id: 'x', rules: [{ type: 'regex', value: 'a(?=b)' }], target: ['output'] },
      [{ pointer: '/rules/0/value', detail: expect.stringContaining('is not a valid RE2 pattern') }],
    ],
    [
      'regex whose program is too large',
      { id: 'x', rules: [{ type: 'regex', value: '((a{1,1000}){1,1000}){1,1000}' }], target: ['output'] },
      [{ pointer: '/rules/0/value', detail: expect.stringContaining('is not a valid RE2 pattern') }],
    ],
    [
      'length without a value',
      { id: 'x', rules: [{ type: 'length' }], target: ['output'] },
      [{ pointer: '/rules/0/value', detail: expect.stringContaining('is required for a length rule') }],
    ],
    [
      'length of zero',
      { id: 'x', rules: [{ type: 'length', value: '0' }], target: ['output'] },
      [{ pointer: '/rules/0/value', detail: 'must be a decimal integer from 1 to 10000000' }],
    ],
    [
      'length above the limit',
      { id: 'x', rules: [{ type: 'length', value: '10000001' }], target: ['output'] },
      [{ pointer: '/rules/0/value', detail: 'must be a decimal integer from 1 to 10000000' }],
    ],
    [
      'length not decimal',
      { id: 'x', rules: [{ type: 'length', value: '1e3' }], target: ['output'] },
      [{ pointer: '/rules/0/value', detail: 'must be a decimal integer from 1 to 10000000' }],
    ],
    [
      'length with a sign',
      { id: 'x', rules: [{ type: 'length', value: '+5' }], target: ['output'] },
      [{ pointer: '/rules/0/value', detail: 'must be a decimal integer from 1 to 10000000' }],
    ],
    [
      'custom without a definition',
      { id: 'x', rules: [{ type: 'relevance' }, { type: 'custom' }], target: ['output'] },
      [{ pointer: '/definition', detail: 'is required by the custom rule at /rules/1' }],
    ],
  ])('answers 422 when %s', async (_name, payload, errors) => {
    const body = problem(await create(payload), 422, 'validation_error')
    expect(body.errors).toEqual(errors)
  })

  it('keeps a detector on toxicity and prompt_injection rules, and returns it only when set', async () => {
    const res = await create(
      policy([
        { type: 'toxicity', detector: 'model' },
        { type: 'prompt_injection', detector: 'judge' },
        { type: 'prompt_injection', detector: null },
      ]),
    )
    expect(res.statusCode).toBe(201)
    const rules = res.json().rules
    expect(rules[0]).toEqual({
      type: 'toxicity',
      expected: 'pass',
      value: null,
      threshold: null,
      flagged: null,
      detector: 'model',
    })
    expect(rules[1].detector).toBe('judge')
    expect(rules[2]).not.toHaveProperty('detector')
    const read = await t.request({ method: 'GET', url: `${url()}/${res.json().id}` })
    expect(read.json().rules).toEqual(rules)
  })

  it('answers 422 for a detector on another rule type, or one that is not model or judge', async () => {
    const body = problem(
      await create(
        policy([
          { type: 'pii', detector: 'model' },
          { type: 'toxicity', detector: 'heuristic' },
        ]),
      ),
      422,
      'validation_error',
    )
    expect(body.errors?.map((e) => e.pointer)).toContain('/rules/1/detector')
    const wrongType = problem(
      await create(policy([{ type: 'pii', detector: 'model' }])),
      422,
      'validation_error',
    )
    expect(wrongType.errors).toEqual([
      {
        pointer: '/rules/0/detector',
        detail: 'applies only to toxicity and prompt_injection rules, not to a pii rule',
      },
    ])
  })

  it('lists schema and rule problems in one answer, compiling no pattern of a body the schema refused', async () => {
    const rules = [
      { type: 'regex', value: '(' },
      { type: 'length', value: 'ten', treshold: 1 },
      { type: 'custom' },
    ]
    const body = problem(
      await create({ id: 'x', rules, target: ['output', 'nowhere'] }),
      422,
      'validation_error',
    )
    expect(body.errors?.map((e) => e.pointer).sort()).toEqual(
      ['/rules/1/treshold', '/target/1', '/rules/1/value', '/definition'].sort(),
    )
    expect(body.errors?.find((e) => e.pointer === '/definition')?.detail).toBe(
      'is required by the custom rule at /rules/2',
    )
    // Once the schema passes, the pattern is compiled, and refused.
    const schemaValid = problem(
      await create({
        id: 'x',
        rules: [rules[0], { type: 'length', value: 'ten' }, rules[2]],
        target: ['output'],
      }),
      422,
      'validation_error',
    )
    expect(schemaValid.errors?.map((e) => e.pointer)).toEqual([
      '/rules/0/value',
      '/rules/1/value',
      '/definition',
    ])
  })

  it('reports every failing rule of a policy at once', async () => {
    const body = problem(
      await create({
        id: 'x',
        rules: [{ type: 'regex' }, { type: 'length', value: 'ten' }, { type: 'keywords' }],
        target: ['output'],
      }),
      422,
      'validation_error',
    )
    expect(body.errors?.map((e) => e.pointer)).toEqual([
      '/rules/0/value',
      '/rules/1/value',
      '/rules/2/flagged',
    ])
  })

  it('answers 409 for a policy id that exists in the application, and allows it in another application', async () => {
    expect(
      (await create({ id: 'same', rules: [{ type: 'relevance' }], target: ['output'] })).statusCode,
    ).toBe(201)
    problem(await create({ id: 'same', rules: [{ type: 'factuality' }], target: ['input'] }), 409, 'conflict')
    await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'bot2', name: 'Bot 2', description: '' },
    })
    expect(
      (await create({ id: 'same', rules: [{ type: 'relevance' }], target: ['output'] }, { app: 'bot2' }))
        .statusCode,
    ).toBe(201)
  })

  it('answers 404 for an unknown application', async () => {
    const body = problem(await create(policy([{ type: 'relevance' }]), { app: 'missing' }), 404, 'not_found')
    expect(body.detail).toContain('missing')
  })

  it('answers 404, exactly as for a missing one, for an application of another workspace', async () => {
    const stranger = await t.key(['policies:write', 'applications:write'], { workspace: 'stranger' })
    const theirs = await create(policy([{ type: 'relevance' }]), { key: stranger })
    const missing = await create(policy([{ type: 'relevance' }]), { key: stranger, app: 'nothing-here' })
    expect(theirs.statusCode).toBe(404)
    expect(missing.statusCode).toBe(404)
    const strip = (b: Record<string, unknown>) => ({
      ...b,
      request_id: undefined,
      detail: String(b.detail).replace(/"[^"]*"/, '""'),
    })
    expect(strip(theirs.json())).toEqual(strip(missing.json()))
  })

  it('answers 422 with a path pointer for an invalid application id in the path', async () => {
    const body = problem(
      await create(policy([{ type: 'relevance' }]), { app: '.hidden' }),
      422,
      'validation_error',
    )
    expect(body.errors).toEqual([
      { pointer: '#/path/application_id', detail: expect.stringContaining('1 to 128') },
    ])
  })

  it('gives exactly one 201 when 20 creates of one policy id race', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        create({ id: 'race', rules: [{ type: 'relevance' }], target: ['output'] }),
      ),
    )
    const codes = answers.map((r) => r.statusCode)
    expect(codes.filter((c) => c === 201)).toHaveLength(1)
    expect(codes.filter((c) => c === 409)).toHaveLength(19)
  })

  it('keeps a new policy in its row only, and stores a version when a PATCH replaces it', async () => {
    const res = await create(policy([{ type: 'relevance' }]))
    const id = res.json().id
    const storedRevisions = async () =>
      (
        await t.store.db
          .selectFrom('policy_revisions')
          .select('revision')
          .where('workspace_id', '=', t.workspaceId)
          .where('application_id', '=', 'bot')
          .where('policy_id', '=', id)
          .execute()
      ).map((r) => r.revision)
    expect(await storedRevisions()).toEqual([])
    const url = `/v1/applications/bot/policies/${id}`
    expect((await t.request({ method: 'GET', url: `${url}/revisions/1` })).json()).toEqual(res.json())
    const patched = await t.request({ method: 'PATCH', url, payload: { override_response: 'Changed.' } })
    expect(patched.statusCode).toBe(200)
    expect(await storedRevisions()).toEqual([1])
    expect((await t.request({ method: 'GET', url: `${url}/revisions/1` })).json()).toEqual(res.json())
    expect((await t.request({ method: 'GET', url: `${url}/revisions/2` })).json()).toEqual(patched.json())
    // A PATCH that loses on If-Match stores nothing.
    const stale = await t.request({
      method: 'PATCH',
      url,
      headers: { 'if-match': res.headers.etag as string },
      payload: { override_response: 'Again.' },
    })
    expect(stale.statusCode).toBe(412)
    expect(await storedRevisions()).toEqual([1])
  })
})

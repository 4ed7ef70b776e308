import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe.each(STORE_KINDS)('POST /v1/applications (%s)', (kind) => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp(kind)
  })
  afterAll(async () => {
    await t.close()
  })

  const create = (payload: unknown, key?: string) =>
    t.request({ method: 'POST', url: '/v1/applications', payload: payload as object, key })

  it('creates an application with every field and answers 201 with Location and ETag', async () => {
    const before = Math.floor(Date.now() / 1000)
    const res = await create({
      id: 'support-bot',
      name: 'Support bot',
      description: 'Answers questions about orders.',
      provider: 'openai',
      model: 'gpt-4o',
      parameters: { system_prompt: 'Be brief.', temperature: 0.2, max_tokens: 1024, top_p: 0.9, top_k: 40 },
    })
    expect(res.statusCode).toBe(201)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.headers.location).toBe('/v1/applications/support-bot')
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
    const body = res.json()
    expect(body).toEqual({
      id: 'support-bot',
      name: 'Support bot',
      description: 'Answers questions about orders.',
      provider: 'openai',
      model: 'gpt-4o',
      parameters: { system_prompt: 'Be brief.', temperature: 0.2, max_tokens: 1024, top_p: 0.9, top_k: 40 },
      created: body.created,
      updated: body.created,
    })
    expect(Number.isInteger(body.created)).toBe(true)
    expect(body.created).toBeGreaterThanOrEqual(before)
    expect(body.created).toBeLessThanOrEqual(Math.floor(Date.now() / 1000))
  })

  it('assigns a UUIDv7 when the id is absent or null, and returns every field with null when unset', async () => {
    for (const payload of [
      { name: 'A', description: '' },
      { id: null, name: 'B', description: 'x' },
    ]) {
      const res = await create(payload)
      expect(res.statusCode).toBe(201)
      const body = res.json()
      expect(body.id).toMatch(UUID_V7)
      expect(res.headers.location).toBe(`/v1/applications/${body.id}`)
      expect(Object.keys(body).sort()).toEqual(
        ['created', 'description', 'id', 'model', 'name', 'parameters', 'provider', 'updated'].sort(),
      )
      expect(body.provider).toBeNull()
      expect(body.model).toBeNull()
      expect(body.parameters).toBeNull()
    }
  })

  it('shows parameters with all five keys when some are set, and null when none are', async () => {
    const some = await create({ name: 'P', description: '', parameters: { temperature: 0, top_k: null } })
    expect(some.json().parameters).toEqual({
      system_prompt: null,
      temperature: 0,
      max_tokens: null,
      top_p: null,
      top_k: null,
    })
    for (const parameters of [{}, null, { temperature: null }]) {
      const none = await create({ name: 'P', description: '', parameters })
      expect(none.statusCode).toBe(201)
      expect(none.json().parameters).toBeNull()
    }
  })

  it('accepts, type-checks and ignores created and updated', async () => {
    const res = await create({ name: 'R', description: '', created: 1, updated: null })
    expect(res.statusCode).toBe(201)
    expect(res.json().created).toBeGreaterThan(1_700_000_000)
    const bad = problem(
      await create({ name: 'R', description: '', created: 'yesterday', updated: 1.5 }),
      422,
      'validation_error',
    )
    expect(bad.errors).toEqual([
      { pointer: '/created', detail: 'must be an integer or null' },
      { pointer: '/updated', detail: 'must be an integer or null' },
    ])
  })

  it('answers 409 for an id that exists in the workspace, and allows the same id in another workspace', async () => {
    expect((await create({ id: 'dup', name: 'One', description: '' })).statusCode).toBe(201)
    const again = problem(await create({ id: 'dup', name: 'Two', description: '' }), 409, 'conflict')
    expect(again.detail).toContain('dup')
    const other = await t.key(['applications:write'], { workspace: 'other' })
    expect((await create({ id: 'dup', name: 'Three', description: '' }, other)).statusCode).toBe(201)
  })

  it('gives exactly one 201 when 20 creates with one id race', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => create({ id: 'racer', name: 'Racer', description: '' })),
    )
    const codes = answers.map((r) => r.statusCode).sort()
    expect(codes.filter((c) => c === 201)).toHaveLength(1)
    expect(codes.filter((c) => c === 409)).toHaveLength(19)
  })

  it.each([
    ['name is required', { description: '' }, [{ pointer: '/name', detail: 'is required' }]],
    ['description is required', { name: 'x' }, [{ pointer: '/description', detail: 'is required' }]],
    [
      'name may not be empty',
      { name: '', description: '' },
      [{ pointer: '/name', detail: 'must not be empty' }],
    ],
    [
      'name may not be blank',
      { name: ' \t ', description: '' },
      [{ pointer: '/name', detail: 'must not be blank' }],
    ],
    [
      'name may not be null',
      { name: null, description: '' },
      [{ pointer: '/name', detail: 'must be a string' }],
    ],
    [
      'name is at most 256',
      { name: 'n'.repeat(257), description: '' },
      [{ pointer: '/name', detail: 'must be at most 256 characters' }],
    ],
    [
      'description is at most 10,000',
      { name: 'x', description: 'd'.repeat(10_001) },
      [{ pointer: '/description', detail: 'must be at most 10000 characters' }],
    ],
    [
      'provider may not be empty',
      { name: 'x', description: '', provider: '' },
      [{ pointer: '/provider', detail: 'must not be empty' }],
    ],
    [
      'model is a string',
      { name: 'x', description: '', model: 4 },
      [{ pointer: '/model', detail: 'must be a string or null' }],
    ],
    [
      'a number is not coerced',
      { name: 'x', description: '', parameters: { max_tokens: '5' } },
      [{ pointer: '/parameters/max_tokens', detail: 'must be an integer or null' }],
    ],
    [
      'temperature at most 2',
      { name: 'x', description: '', parameters: { temperature: 2.01 } },
      [{ pointer: '/parameters/temperature', detail: 'must be at most 2' }],
    ],
    [
      'temperature at least 0',
      { name: 'x', description: '', parameters: { temperature: -0.1 } },
      [{ pointer: '/parameters/temperature', detail: 'must be at least 0' }],
    ],
    [
      'top_p at most 1',
      { name: 'x', description: '', parameters: { top_p: 1.5 } },
      [{ pointer: '/parameters/top_p', detail: 'must be at most 1' }],
    ],
    [
      'max_tokens is an integer',
      { name: 'x', description: '', parameters: { max_tokens: 1.5 } },
      [{ pointer: '/parameters/max_tokens', detail: 'must be an integer or null' }],
    ],
    [
      'max_tokens at least 1',
      { name: 'x', description: '', parameters: { max_tokens: 0 } },
      [{ pointer: '/parameters/max_tokens', detail: 'must be at least 1' }],
    ],
    [
      'max_tokens at most 10,000,000',
      { name: 'x', description: '', parameters: { max_tokens: 10_000_001 } },
      [{ pointer: '/parameters/max_tokens', detail: 'must be at most 10000000' }],
    ],
    [
      'top_k in 1..10,000',
      { name: 'x', description: '', parameters: { top_k: 10_001 } },
      [{ pointer: '/parameters/top_k', detail: 'must be at most 10000' }],
    ],
    [
      'system_prompt at most 200,000',
      { name: 'x', description: '', parameters: { system_prompt: 's'.repeat(200_001) } },
      [{ pointer: '/parameters/system_prompt', detail: 'must be at most 200000 characters' }],
    ],
    [
      'parameters is an object',
      { name: 'x', description: '', parameters: [] },
      [{ pointer: '/parameters', detail: 'must be an object or null' }],
    ],
    [
      'an unknown top-level field',
      { name: 'x', description: '', colour: 'red' },
      [{ pointer: '/colour', detail: 'is not a known field' }],
    ],
    [
      'an unknown nested field',
      { name: 'x', description: '', parameters: { temprature: 1 } },
      [{ pointer: '/parameters/temprature', detail: 'is not a known field' }],
    ],
    [
      'a pointer escapes / and ~',
      { name: 'x', description: '', 'a/b~c': 1 },
      [{ pointer: '/a~1b~0c', detail: 'is not a known field' }],
    ],
    [
      'an id with a slash',
      { id: 'a/b', name: 'x', description: '' },
      [{ pointer: '/id', detail: expect.stringContaining('1 to 128 characters') }],
    ],
    [
      'the id "."',
      { id: '.', name: 'x', description: '' },
      [{ pointer: '/id', detail: expect.stringContaining("not starting with '.'") }],
    ],
    [
      'the id ".."',
      { id: '..', name: 'x', description: '' },
      [{ pointer: '/id', detail: expect.stringContaining("not starting with '.'") }],
    ],
    [
      'an id of 129 characters',
      { id: 'a'.repeat(129), name: 'x', description: '' },
      [{ pointer: '/id', detail: expect.stringContaining('1 to 128') }],
    ],
    [
      'an empty id',
      { id: '', name: 'x', description: '' },
      [{ pointer: '/id', detail: expect.stringContaining('1 to 128') }],
    ],
  ])('answers 422 when %s', async (_name, payload, errors) => {
    const body = problem(await create(payload), 422, 'validation_error')
    expect(body.type).toBe('/problems/validation-error')
    expect(body.errors).toEqual(errors)
  })

  it('lists every problem at once, with a count in detail', async () => {
    const body = problem(
      await create({ name: '', parameters: { temperature: 9, top_k: 0, x: 1 }, extra: true }),
      422,
      'validation_error',
    )
    expect(body.detail).toBe('6 problems in the request body')
    expect(body.errors?.map((e) => e.pointer).sort()).toEqual(
      [
        '/description',
        '/extra',
        '/name',
        '/parameters/temperature',
        '/parameters/top_k',
        '/parameters/x',
      ].sort(),
    )
  })

  it('accepts ids at the edges of the pattern', async () => {
    for (const id of ['a', '_', '-x', 'A.b~c_d-e', 'z'.repeat(128)]) {
      const res = await create({ id, name: 'edge', description: '' })
      expect(res.statusCode, id).toBe(201)
      expect(res.json().id).toBe(id)
    }
  })

  it('keeps Unicode text exactly', async () => {
    const name = 'Bot 🤖 — Überprüfung 日本'
    const res = await create({ name, description: 'línea\nnueva', provider: 'mistral' })
    expect(res.statusCode).toBe(201)
    expect(res.json().name).toBe(name)
    expect(res.json().description).toBe('línea\nnueva')
  })
})

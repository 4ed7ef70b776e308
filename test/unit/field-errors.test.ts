import { type TSchema, Type } from '@sinclair/typebox'
import type { ErrorObject, ValidateFunction } from 'ajv'
import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import { installValidators, toFieldErrors } from '../../src/http/validation.js'
import { ID_PATTERN, ID_RULE, NOT_BLANK_PATTERN, Nullable } from '../../src/schemas/common.js'

type Compile = (route: { schema: unknown; httpPart: string }) => ValidateFunction

/** The validator compilers the app installs, taken without building an app. */
const compile = (() => {
  let installed: Compile | undefined
  installValidators({
    setValidatorCompiler: (compiler: Compile) => {
      installed = compiler
    },
  } as unknown as FastifyInstance)
  if (!installed) throw new Error('installValidators installed no compiler')
  return installed
})()

/** Validates `data` against `schema` as the app would for `part`, and maps what Ajv reports. */
function fieldErrors(schema: TSchema, data: unknown, part = 'body') {
  const validate = compile({ schema, httpPart: part })
  expect(validate(data)).toBe(false)
  return toFieldErrors(validate.errors ?? [], part)
}

const strict = <T extends Record<string, TSchema>>(properties: T) =>
  Type.Object(properties, { additionalProperties: false })

const Parameters = strict({
  temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
  max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 10_000_000 }))),
})

describe('toFieldErrors', () => {
  it('gives the two errors of the contract example, one pointer and one sentence each', () => {
    const schema = strict({ name: Type.String(), parameters: Type.Optional(Parameters) })
    expect(fieldErrors(schema, { name: 'n', parameters: { temperature: 3 }, unknown_field: 1 })).toEqual([
      { pointer: '/unknown_field', detail: 'is not a known field' },
      { pointer: '/parameters/temperature', detail: 'must be at most 2' },
    ])
  })

  it('names an unknown field at every depth', () => {
    const schema = strict({ parameters: Parameters, rules: Type.Array(strict({ type: Type.String() })) })
    expect(
      fieldErrors(schema, {
        parameters: { treshold: 0.5 },
        rules: [{ type: 'pii' }, { type: 'pii', valeu: 1 }],
      }),
    ).toEqual([
      { pointer: '/parameters/treshold', detail: 'is not a known field' },
      { pointer: '/rules/1/valeu', detail: 'is not a known field' },
    ])
  })

  it('points a missing field at where it belongs', () => {
    const schema = strict({ name: Type.String(), rules: Type.Array(strict({ type: Type.String() })) })
    expect(fieldErrors(schema, { rules: [{}] })).toEqual([
      { pointer: '/name', detail: 'is required' },
      { pointer: '/rules/0/type', detail: 'is required' },
    ])
  })

  it('lists the allowed values of an enum, without the null a nullable one also allows', () => {
    const mode = Type.Unsafe({ type: 'string', enum: ['enforce', 'monitor'] })
    const schema = strict({
      mode: Nullable(mode),
      target: Type.Array(Type.Unsafe({ type: 'string', enum: ['input', 'output'] })),
    })
    expect(fieldErrors(schema, { mode: 'loud', target: ['input', 'outptu'] })).toEqual([
      { pointer: '/mode', detail: 'must be one of: enforce, monitor' },
      { pointer: '/target/1', detail: 'must be one of: input, output' },
    ])
  })

  it('states bounds of numbers, text and lists', () => {
    const schema = strict({
      temperature: Type.Number({ minimum: 0, maximum: 2 }),
      top_k: Type.Integer({ minimum: 1 }),
      name: Type.String({ minLength: 1, maxLength: 4 }),
      code: Type.String({ minLength: 3 }),
      rules: Type.Array(Type.String(), { minItems: 1, maxItems: 2 }),
      flagged: Type.Array(Type.String(), { minItems: 2 }),
      tags: Type.Array(Type.String(), { maxItems: 1 }),
    })
    expect(
      fieldErrors(schema, {
        temperature: -0.5,
        top_k: 0,
        name: 'toolong',
        code: 'ab',
        rules: [],
        flagged: ['x'],
        tags: ['a', 'b'],
      }),
    ).toEqual([
      { pointer: '/temperature', detail: 'must be at least 0' },
      { pointer: '/top_k', detail: 'must be at least 1' },
      { pointer: '/name', detail: 'must be at most 4 characters' },
      { pointer: '/code', detail: 'must be at least 3 characters' },
      { pointer: '/rules', detail: 'must not be empty' },
      { pointer: '/flagged', detail: 'must have at least 2 items' },
      { pointer: '/tags', detail: 'must have at most 1 items' },
    ])
  })

  it('names the expected type, including nullable ones, and never coerces a body', () => {
    const schema = strict({
      max_tokens: Type.Integer(),
      temperature: Nullable(Type.Number()),
      name: Type.String(),
      on: Type.Boolean(),
      parameters: Parameters,
      rules: Type.Array(Type.String()),
    })
    expect(
      fieldErrors(schema, {
        max_tokens: 1.5,
        temperature: '1',
        name: 1,
        on: 'true',
        parameters: [],
        rules: {},
      }),
    ).toEqual([
      { pointer: '/max_tokens', detail: 'must be an integer' },
      { pointer: '/temperature', detail: 'must be a number or null' },
      { pointer: '/name', detail: 'must be a string' },
      { pointer: '/on', detail: 'must be a boolean' },
      { pointer: '/parameters', detail: 'must be an object' },
      { pointer: '/rules', detail: 'must be an array' },
    ])
  })

  it('says which items of a unique list repeat, lowest index first', () => {
    const schema = strict({ target: Type.Array(Type.String(), { uniqueItems: true }) })
    expect(fieldErrors(schema, { target: ['input', 'output', 'input'] })).toEqual([
      { pointer: '/target', detail: 'must not repeat an item (items 0 and 2 are equal)' },
    ])
  })

  it('uses the id rule for the id pattern and plain words for the not-blank one', () => {
    const schema = strict({
      id: Type.String({ pattern: ID_PATTERN }),
      name: Type.String({ pattern: NOT_BLANK_PATTERN }),
      code: Type.String({ pattern: '^[a-z]+$' }),
    })
    expect(fieldErrors(schema, { id: '..', name: ' \t', code: 'A1' })).toEqual([
      { pointer: '/id', detail: ID_RULE },
      { pointer: '/name', detail: 'must not be blank' },
      { pointer: '/code', detail: 'must match the pattern ^[a-z]+$' },
    ])
  })

  it('says only "must not be empty" for an empty string that also fails the not-blank pattern', () => {
    const schema = strict({ name: Type.String({ minLength: 1, pattern: NOT_BLANK_PATTERN }) })
    expect(fieldErrors(schema, { name: '' })).toEqual([{ pointer: '/name', detail: 'must not be empty' }])
    expect(fieldErrors(schema, { name: '  ' })).toEqual([{ pointer: '/name', detail: 'must not be blank' }])
  })

  it("escapes '~' and '/' in member names as RFC 6901 says", () => {
    const schema = strict({ 'a/b': Type.String(), 'm~n': strict({ 'x/~y': Type.Integer() }) })
    expect(fieldErrors(schema, { 'a/b': 1, 'm~n': { 'x/~y': 'z', 'new/~key': 1 }, '~/': 0 })).toEqual([
      { pointer: '/~0~1', detail: 'is not a known field' },
      { pointer: '/a~1b', detail: 'must be a string' },
      { pointer: '/m~0n/new~1~0key', detail: 'is not a known field' },
      { pointer: '/m~0n/x~1~0y', detail: 'must be an integer' },
    ])
    const required = strict({ 'a/b~c': Type.String() })
    expect(fieldErrors(required, {})).toEqual([{ pointer: '/a~1b~0c', detail: 'is required' }])
  })

  it('points into the query string under #/query, coercing its text to numbers', () => {
    const query = strict({
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
      cursor: Type.Optional(Type.String({ minLength: 1 })),
    })
    expect(compile({ schema: query, httpPart: 'querystring' })({ limit: '50' })).toBe(true)
    expect(fieldErrors(query, { limit: '0', cursor: '' }, 'querystring')).toEqual([
      { pointer: '#/query/limit', detail: 'must be at least 1' },
      { pointer: '#/query/cursor', detail: 'must not be empty' },
    ])
    expect(fieldErrors(query, { limit: 'ten' }, 'querystring')).toEqual([
      { pointer: '#/query/limit', detail: 'must be an integer' },
    ])
    expect(fieldErrors(query, { sort: 'x' }, 'querystring')).toEqual([
      { pointer: '#/query/sort', detail: 'is not a known field' },
    ])
    expect(fieldErrors(query, { limit: '9'.repeat(21) }, 'querystring')).toEqual([
      { pointer: '#/query/limit', detail: 'must be at most 200' },
    ])
  })

  it('points into the path under #/path, and other parts under their own name', () => {
    const params = strict({ application_id: Type.String({ pattern: ID_PATTERN }) })
    expect(fieldErrors(params, { application_id: '.' }, 'params')).toEqual([
      { pointer: '#/path/application_id', detail: ID_RULE },
    ])
    const headers = Type.Object({ 'if-match': Type.String({ maxLength: 3 }) })
    expect(fieldErrors(headers, { 'if-match': '"abcd"' }, 'headers')).toEqual([
      { pointer: '#/headers/if-match', detail: 'must be at most 3 characters' },
    ])
  })

  it('reports each pointer and sentence once, and falls back to the validator message', () => {
    const error = (keyword: string, params: Record<string, unknown>, message?: string): ErrorObject => ({
      keyword,
      instancePath: '/x',
      schemaPath: '#',
      params,
      ...(message === undefined ? {} : { message }),
    })
    expect(
      toFieldErrors(
        [
          error('minimum', { limit: 1 }),
          error('minimum', { limit: 1 }),
          error('format', { format: 'email' }, 'must match format "email"'),
          error('const', {}),
        ],
        'body',
      ),
    ).toEqual([
      { pointer: '/x', detail: 'must be at least 1' },
      { pointer: '/x', detail: 'must match format "email"' },
      { pointer: '/x', detail: 'is invalid' },
    ])
  })
})

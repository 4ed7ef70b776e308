import { type SchemaOptions, type Static, type TSchema, Type } from '@sinclair/typebox'

/** Ids a client may choose: URL-path safe, 1–128 characters, never `.` or `..`. */
export const ID_PATTERN = '^[A-Za-z0-9_-][A-Za-z0-9._~-]{0,127}$'
export const ID_RULE =
  "must be 1 to 128 characters of A-Z, a-z, 0-9, '-', '_', '.', '~', not starting with '.' or '~'"
/** At least one character that is not white space. */
export const NOT_BLANK_PATTERN = '\\S'

/**
 * Makes a schema also accept `null`, as `type: [T, "null"]` (JSON Schema 2020-12 / OpenAPI 3.1),
 * which validates in one step and reports one clear error instead of an `anyOf` of two.
 */
export function Nullable<T extends TSchema>(schema: T, options: SchemaOptions = {}) {
  const { type, enum: values, ...rest } = schema as TSchema & { type?: string; enum?: unknown[] }
  const nullable: Record<string, unknown> = { ...rest, ...options, type: [type, 'null'] }
  if (values) nullable.enum = [...values, null]
  return Type.Unsafe<Static<T> | null>(nullable)
}

export const ResourceIdSchema = (options: SchemaOptions) => Type.String({ pattern: ID_PATTERN, ...options })

/** Seconds since the Unix epoch, UTC. */
export const TimestampSchema = (description: string) => Type.Integer({ description, examples: [1767225600] })

/** A read-only field a client may send back: type-checked, then ignored. */
export const ReadOnlyInteger = (description: string, example: number) =>
  Type.Optional(
    Nullable(Type.Integer(), {
      description: `${description} Read-only: accepted and ignored.`,
      examples: [example],
    }),
  )

/** A read-only text field a client may send back: type-checked, then ignored. */
export const ReadOnlyString = (description: string, example: string) =>
  Type.Optional(
    Nullable(Type.String(), {
      description: `${description} Read-only: accepted and ignored.`,
      examples: [example],
    }),
  )

/** A string schema of one of `values`, as a plain `enum` (one clear error, not an anyOf of consts). */
export const enumOf = <T extends string>(values: readonly T[], options: SchemaOptions = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...options })

export const ProblemSchema = Type.Object(
  {
    type: Type.String({
      description: 'A URI reference naming the kind of problem.',
      examples: ['/problems/validation-error'],
    }),
    title: Type.String({
      description: 'Short summary of the kind of problem.',
      examples: ['Request is invalid'],
    }),
    status: Type.Integer({ description: 'The HTTP status code.', examples: [422] }),
    detail: Type.String({
      description: 'What went wrong with this request.',
      examples: ['/parameters/temperature must be at most 2'],
    }),
    code: Type.String({
      description: 'Stable machine-readable error code.',
      examples: ['validation_error'],
    }),
    request_id: Type.String({
      description: 'The request id, also sent as the X-Request-Id header; quote it in reports.',
      examples: ['0195f3c8-7d2a-7b7e-9a51-2c1f4d3e8a90'],
    }),
    errors: Type.Optional(
      Type.Array(
        Type.Object(
          {
            pointer: Type.String({
              description: 'JSON Pointer into the body, or #/query/... and #/path/... for other parts.',
              examples: ['/parameters/temperature'],
            }),
            detail: Type.String({
              description: 'What is wrong with that part.',
              examples: ['must be at most 2'],
            }),
          },
          { additionalProperties: false },
        ),
        {
          description: 'Present on 422: one entry per problem found.',
          examples: [[{ pointer: '/parameters/temperature', detail: 'must be at most 2' }]],
        },
      ),
    ),
    failures: Type.Optional(
      // By $id: the test result schema lives with the policy tests (schemas/policy-tests.ts).
      Type.Array(Type.Unsafe<unknown>({ $ref: 'PolicyTestResult' }), {
        description:
          'Present on 409 tests_failed: the test cases the refused policy change breaks, each as a test run reports it.',
        examples: [[]],
      }),
    ),
  },
  {
    $id: 'Problem',
    title: 'Problem',
    description: 'An RFC 9457 problem details object, sent as application/problem+json.',
    additionalProperties: false,
  },
)
export type Problem = Static<typeof ProblemSchema>

export const ApplicationIdParam = ResourceIdSchema({
  description: 'The id of the application.',
  examples: ['support-bot'],
})

export const ListQuerySchema = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 200,
        default: 50,
        description: 'Page size, 1 to 200.',
        examples: [50],
      }),
    ),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        description: 'Where to continue: next_cursor from the previous page. Opaque.',
        examples: ['eyJ2IjoxLCJwIjo1MH0'],
      }),
    ),
  },
  { additionalProperties: false },
)
export type ListQuery = Static<typeof ListQuerySchema>

/** `{"data": [...], "next_cursor": ...}` around a list of `item`. */
export const PageSchema = <T extends TSchema>(item: T, description: string, example: unknown) =>
  Type.Object(
    {
      data: Type.Array(item, { description, examples: [[example]] }),
      next_cursor: Nullable(Type.String(), {
        description: 'Pass as ?cursor= to get the next page; null on the last page.',
        examples: ['eyJ2IjoxLCJwIjo1MH0'],
      }),
    },
    { additionalProperties: false },
  )

export const IfMatchHeaderSchema = Type.Object({
  'if-match': Type.Optional(
    Type.String({
      description: 'Apply only if the resource still has this ETag (from a previous answer); else 412.',
      examples: ['"3q2-7wEAAAAFUw1k"'],
    }),
  ),
})

export const IdempotencyHeaderSchema = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Makes a retry safe: the same key with the same body within 24 hours replays the first answer (header Idempotent-Replayed: true). 1 to 255 printable ASCII characters.',
      examples: ['9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d'],
    }),
  ),
})

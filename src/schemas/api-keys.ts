import { type Static, Type } from '@sinclair/typebox'
import { Nullable, PageSchema, TimestampSchema } from './common.js'

export const SCOPES = [
  'applications:read',
  'applications:write',
  'policies:read',
  'policies:write',
  'evaluations:read',
  'evaluations:write',
  'admin',
] as const
export type Scope = (typeof SCOPES)[number]

const scopes = Type.Array(Type.Unsafe<(typeof SCOPES)[number]>({ type: 'string', enum: [...SCOPES] }), {
  minItems: 1,
  maxItems: SCOPES.length,
  uniqueItems: true,
  description:
    'What the key may do: applications:read, applications:write, policies:read, policies:write, evaluations:read, evaluations:write, admin (admin implies all).',
  examples: [['applications:read', 'policies:read']],
})
const name = Type.String({
  minLength: 1,
  maxLength: 256,
  description: 'A label to recognise the key, 1 to 256 characters.',
  examples: ['ci-pipeline'],
})
const expiresAt = Nullable(Type.Integer(), {
  description: 'When the key stops working, Unix seconds; null for never. Must be in the future.',
  examples: [1798761600],
})

export const ApiKeyCreateSchema = Type.Object(
  { name, scopes, expires_at: Type.Optional(expiresAt) },
  { additionalProperties: false, title: 'ApiKeyCreate' },
)
export type ApiKeyCreate = Static<typeof ApiKeyCreateSchema>

const apiKeyFields = {
  id: Type.String({
    description: 'The key id, for revoking it.',
    examples: ['019ab2c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d'],
  }),
  name: Nullable(Type.String(), { description: name.description, examples: name.examples }),
  prefix: Type.String({
    description: 'The first characters of the secret, to recognise the key; never enough to use it.',
    examples: ['wdn_Ab3dE9'],
  }),
  scopes,
  created: TimestampSchema('Creation time, Unix seconds (UTC).'),
  expires_at: expiresAt,
  revoked_at: Nullable(Type.Integer(), {
    description: 'When the key was revoked, Unix seconds; null if active.',
    examples: [null],
  }),
}

export const ApiKeySchema = Type.Object(apiKeyFields, {
  $id: 'ApiKey',
  title: 'ApiKey',
  additionalProperties: false,
})
export type ApiKey = Static<typeof ApiKeySchema>

export const ApiKeyCreatedSchema = Type.Object(
  {
    ...apiKeyFields,
    key: Type.String({
      description: 'The secret, shown only in this answer: send it as Authorization: Bearer <key>.',
      examples: ['wdn_Ab3dE9fGhIjKlMnOpQrStUvWxYz0123456789abcde'],
    }),
  },
  { $id: 'ApiKeyCreated', title: 'ApiKeyCreated', additionalProperties: false },
)
export type ApiKeyCreated = Static<typeof ApiKeyCreatedSchema>

export const ApiKeyPageSchema = PageSchema(
  Type.Ref(ApiKeySchema),
  'API keys of the workspace, oldest first.',
  {
    id: '019ab2c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d',
    name: 'ci-pipeline',
    prefix: 'wdn_Ab3dE9',
    scopes: ['applications:read', 'policies:read'],
    created: 1767225600,
    expires_at: null,
    revoked_at: null,
  },
)

export const ApiKeyParamsSchema = Type.Object({
  key_id: Type.String({
    minLength: 1,
    maxLength: 128,
    description: 'The key id.',
    examples: ['019ab2c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d'],
  }),
})
export type ApiKeyParams = Static<typeof ApiKeyParamsSchema>

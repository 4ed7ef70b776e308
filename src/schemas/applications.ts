import { type Static, Type } from '@sinclair/typebox'
import {
  ApplicationIdParam,
  NOT_BLANK_PATTERN,
  Nullable,
  PageSchema,
  ReadOnlyInteger,
  ResourceIdSchema,
  TimestampSchema,
} from './common.js'

const parameterFields = {
  system_prompt: Type.String({
    maxLength: 200_000,
    description: 'System prompt sent with every conversation, 0 to 200,000 characters.',
    examples: ['You are a helpful support agent for Acme.'],
  }),
  temperature: Type.Number({
    minimum: 0,
    maximum: 2,
    description: 'Sampling temperature, 0 to 2.',
    examples: [0.2],
  }),
  max_tokens: Type.Integer({
    minimum: 1,
    maximum: 10_000_000,
    description: 'Largest number of tokens to generate, 1 to 10,000,000.',
    examples: [1024],
  }),
  top_p: Type.Number({
    minimum: 0,
    maximum: 1,
    description: 'Nucleus sampling mass, 0 to 1.',
    examples: [0.9],
  }),
  top_k: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    description: 'Sample only from the k most likely tokens, 1 to 10,000.',
    examples: [40],
  }),
}

type ParameterField = keyof typeof parameterFields
const nullableParameter = <K extends ParameterField>(key: K) =>
  Nullable(parameterFields[key], {
    description: parameterFields[key].description,
    examples: parameterFields[key].examples,
  })

/** Generation parameters as a client sends them: every field optional and nullable. */
export const ApplicationParametersInputSchema = Type.Object(
  {
    system_prompt: Type.Optional(nullableParameter('system_prompt')),
    temperature: Type.Optional(nullableParameter('temperature')),
    max_tokens: Type.Optional(nullableParameter('max_tokens')),
    top_p: Type.Optional(nullableParameter('top_p')),
    top_k: Type.Optional(nullableParameter('top_k')),
  },
  { additionalProperties: false },
)
export type ApplicationParametersInput = Static<typeof ApplicationParametersInputSchema>

/** Generation parameters as Warden returns them: all five keys, `null` when not set. */
export const ApplicationParametersSchema = Type.Object(
  {
    system_prompt: nullableParameter('system_prompt'),
    temperature: nullableParameter('temperature'),
    max_tokens: nullableParameter('max_tokens'),
    top_p: nullableParameter('top_p'),
    top_k: nullableParameter('top_k'),
  },
  { additionalProperties: false },
)
export type ApplicationParameters = Static<typeof ApplicationParametersSchema>

const idDescription =
  'Unique within the workspace. Chosen by the client (1 to 128 URL-safe characters) or, when absent or null, a server-generated UUIDv7.'
const name = Type.String({
  minLength: 1,
  maxLength: 256,
  pattern: NOT_BLANK_PATTERN,
  description: 'Display name, 1 to 256 characters, not only white space.',
  examples: ['Support bot'],
})
const description = Type.String({
  maxLength: 10_000,
  description: 'What the application does, 0 to 10,000 characters.',
  examples: ['Answers customer questions about orders and returns.'],
})
const provider = Nullable(Type.String({ minLength: 1, maxLength: 256 }), {
  description: 'Model provider, free-form, 1 to 256 characters.',
  examples: ['openai'],
})
const model = Nullable(Type.String({ minLength: 1, maxLength: 256 }), {
  description: 'Model name, free-form, 1 to 256 characters.',
  examples: ['gpt-4o'],
})
const parametersExample = {
  system_prompt: 'You are a helpful support agent.',
  temperature: 0.2,
  max_tokens: 1024,
}
const parametersInput = Nullable(ApplicationParametersInputSchema, {
  description: 'Generation parameters; null or absent when none are set.',
  examples: [parametersExample],
})

export const ApplicationCreateSchema = Type.Object(
  {
    id: Type.Optional(
      Nullable(ResourceIdSchema({}), { description: idDescription, examples: ['support-bot'] }),
    ),
    name,
    description,
    provider: Type.Optional(provider),
    model: Type.Optional(model),
    parameters: Type.Optional(parametersInput),
    created: ReadOnlyInteger('Creation time, Unix seconds.', 1767225600),
    updated: ReadOnlyInteger('Last change, Unix seconds.', 1767225600),
  },
  { additionalProperties: false, title: 'ApplicationCreate' },
)
export type ApplicationCreate = Static<typeof ApplicationCreateSchema>

export const ApplicationSchema = Type.Object(
  {
    id: ResourceIdSchema({ description: idDescription, examples: ['support-bot'] }),
    name,
    description,
    provider,
    model,
    parameters: Nullable(ApplicationParametersSchema, {
      description: 'Generation parameters: null when none are set, else all five keys.',
      examples: [{ ...parametersExample, top_p: null, top_k: null }],
    }),
    created: TimestampSchema('Creation time, Unix seconds (UTC), set by the server.'),
    updated: TimestampSchema('Last change, Unix seconds (UTC), set by the server.'),
  },
  { $id: 'Application', title: 'Application', additionalProperties: false },
)
export type Application = Static<typeof ApplicationSchema>

export const ApplicationParamsSchema = Type.Object({ application_id: ApplicationIdParam })
export type ApplicationParams = Static<typeof ApplicationParamsSchema>

export const ApplicationPatchSchema = Type.Object(
  {
    id: Type.Optional(
      ResourceIdSchema({
        description: 'Ids cannot change; if sent, it must equal the id in the path.',
        examples: ['support-bot'],
      }),
    ),
    name: Type.Optional(name),
    description: Type.Optional(description),
    provider: Type.Optional(provider),
    model: Type.Optional(model),
    parameters: Type.Optional(
      Nullable(ApplicationParametersInputSchema, {
        description:
          'Merged into the current parameters: a key set to null is cleared; null clears them all.',
        examples: [{ temperature: 0.5, top_p: null }],
      }),
    ),
    created: ReadOnlyInteger('Creation time, Unix seconds.', 1767225600),
    updated: ReadOnlyInteger('Last change, Unix seconds.', 1767225600),
  },
  { additionalProperties: false, title: 'ApplicationPatch' },
)
export type ApplicationPatch = Static<typeof ApplicationPatchSchema>

const APPLICATION_EXAMPLE: Application = {
  id: 'support-bot',
  name: 'Support bot',
  description: 'Answers customer questions about orders and returns.',
  provider: 'openai',
  model: 'gpt-4o',
  parameters: { ...parametersExample, top_p: null, top_k: null },
  created: 1767225600,
  updated: 1767225600,
}

export const ApplicationPageSchema = PageSchema(
  Type.Ref(ApplicationSchema),
  'Applications in creation order.',
  APPLICATION_EXAMPLE,
)

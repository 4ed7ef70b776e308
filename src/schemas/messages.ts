import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { enumOf } from './common.js'

/**
 * One message of a conversation in OpenAI's Chat Completions shape (docs/agents.md), the same for
 * every route that takes a conversation: evaluations, policy tests, the playground and the guarded
 * chat completions. Shapes are written without `anyOf`, so a wrong value answers one error naming
 * what was expected ("must be a string or an array or null"), never one error per branch.
 */

/** Roles as sent; `developer` reads as `system`, `function` (OpenAI's deprecated form) as `tool`. */
export const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const
export type ChatRole = (typeof CHAT_ROLES)[number]

/** The part types whose text is read: `text` parts and an assistant's `refusal` parts. */
export const READ_PART_TYPES = ['text', 'refusal'] as const

/** A content part as OpenAI defines it; only text and refusal parts carry text that is read. */
export interface ContentPart {
  type: string
  text?: string
  refusal?: string
  [field: string]: unknown
}

export const ContentPartSchema = Type.Unsafe<ContentPart>(
  Type.Object(
    {
      type: Type.String({
        minLength: 1,
        description:
          'The kind of part: `text` and `refusal` are read; `image_url`, `input_audio`, `file` and any other kind are passed over (an evaluation names them in `not_read`).',
        examples: ['text'],
      }),
      text: Type.Optional(
        Type.String({ description: 'The text of a `text` part (required there).', examples: ['Hello'] }),
      ),
      refusal: Type.Optional(
        Type.String({ description: 'The text of a `refusal` part (required there).', examples: ['No.'] }),
      ),
    },
    {
      additionalProperties: true,
      description:
        'A content part as OpenAI defines it: {"type": "text", "text": …}, {"type": "image_url", "image_url": {"url": …}}, {"type": "input_audio", "input_audio": {"data": …, "format": …}}, {"type": "file", "file": {…}}.',
      examples: [{ type: 'text', text: 'Where is my order?' }],
    },
  ),
)

/** A tool call an assistant made: a function with its arguments (a JSON text), or a custom tool's input. */
export interface ToolCall {
  id?: string
  type?: string
  function?: { name?: string; arguments?: string; [field: string]: unknown }
  custom?: { name?: string; input?: string; [field: string]: unknown }
  [field: string]: unknown
}

export const ToolCallSchema = Type.Unsafe<ToolCall>(
  Type.Object(
    {
      id: Type.Optional(
        Type.String({ description: 'The call’s id, which a tool message answers.', examples: ['call_1'] }),
      ),
      type: Type.Optional(Type.String({ description: '`function` (or `custom`).', examples: ['function'] })),
      function: Type.Optional(
        Type.Object(
          {
            name: Type.Optional(Type.String({ description: 'The function called.', examples: ['refund'] })),
            arguments: Type.Optional(
              Type.String({
                description:
                  'The arguments, a JSON text as the model wrote it: read by the `assistant` target, and by `output` in the last assistant turn.',
                examples: ['{"order": 1042, "card": "4111 1111 1111 1111"}'],
              }),
            ),
          },
          {
            additionalProperties: true,
            description: 'The function called and its arguments.',
            examples: [{ name: 'refund', arguments: '{"order": 1042}' }],
          },
        ),
      ),
      custom: Type.Optional(
        Type.Object(
          {
            name: Type.Optional(Type.String({ description: 'The custom tool called.', examples: ['shell'] })),
            input: Type.Optional(
              Type.String({
                description: 'A custom tool’s input, read like function arguments.',
                examples: ['ls'],
              }),
            ),
          },
          {
            additionalProperties: true,
            description: 'A custom tool called and its free-form input.',
            examples: [{ name: 'shell', input: 'ls' }],
          },
        ),
      ),
    },
    {
      additionalProperties: true,
      description: 'A tool call of an assistant turn.',
      examples: [
        { id: 'call_1', type: 'function', function: { name: 'refund', arguments: '{"order": 1042}' } },
      ],
    },
  ),
)

/** The most parts one message's content holds. */
export const MAX_CONTENT_PARTS = 10_000
/** The most tool calls one assistant turn holds. */
export const MAX_TOOL_CALLS = 1_000

export interface ChatMessage {
  role: ChatRole
  content?: string | readonly ContentPart[] | null
  name?: string
  tool_calls?: readonly ToolCall[]
  tool_call_id?: string
  refusal?: string | null
  audio?: Record<string, unknown> | null
  function_call?: Record<string, unknown> | null
}

/** The content: a string, an array of parts, or null, as one type (one error when it is none of them). */
const ContentSchema = Type.Unsafe<ChatMessage['content']>({
  type: ['string', 'array', 'null'],
  items: ContentPartSchema,
  maxItems: MAX_CONTENT_PARTS,
  description:
    'A string, an array of content parts (their text and refusal parts are read, joined with "\\n"), or null (an assistant turn that only calls tools). Absent reads as null.',
  examples: ['Where is my order 1042?'],
})

const NullableObject = (description: string, example: unknown) =>
  Type.Unsafe<Record<string, unknown> | null>({
    type: ['object', 'null'],
    additionalProperties: true,
    description,
    examples: [example],
  })

const messageProperties = (content: TSchema) => ({
  role: enumOf(CHAT_ROLES, {
    description:
      'system, developer (read as system), user, assistant, tool (a tool’s result, read by the context target as a retrieved document), or function (OpenAI’s deprecated form of tool, read as tool).',
    examples: ['user'],
  }),
  content: Type.Optional(content),
  name: Type.Optional(
    Type.String({ description: 'A name for the participant; not read.', examples: ['alice'] }),
  ),
  tool_calls: Type.Optional(
    Type.Array(ToolCallSchema, {
      maxItems: MAX_TOOL_CALLS,
      description:
        'The tool calls of an assistant turn. Their arguments are read by the assistant target, and by output in the last turn; findings in them carry `tool_call` and `path`.',
      examples: [
        [{ id: 'call_1', type: 'function', function: { name: 'find_order', arguments: '{"id":1042}' } }],
      ],
    }),
  ),
  tool_call_id: Type.Optional(
    Type.String({ description: 'The tool call a tool message answers.', examples: ['call_1'] }),
  ),
  refusal: Type.Optional(
    Type.Unsafe<string | null>({
      type: ['string', 'null'],
      description: 'An assistant’s refusal; read as its text when the turn has no content.',
      examples: [null],
    }),
  ),
  audio: Type.Optional(NullableObject('A previous audio reply, by id; not read.', { id: 'audio_abc123' })),
  function_call: Type.Optional(
    NullableObject(
      'OpenAI’s deprecated function call of an assistant turn; not read (an evaluation names it in `not_read`).',
      {
        name: 'find_order',
        arguments: '{"id":1042}',
      },
    ),
  ),
})

const MESSAGE_OPTIONS = {
  additionalProperties: false,
  description: 'One message of the conversation, in OpenAI’s Chat Completions shape.',
  examples: [{ role: 'user', content: 'Where is my order 1042?' }],
} as const

export const MessageSchema = Type.Unsafe<ChatMessage>(
  Type.Object(messageProperties(ContentSchema), MESSAGE_OPTIONS),
)

/**
 * A message as an answer gives it back (`masked`): the request's shape, its content one of three
 * schemas rather than one of three types, which the answers' serializer writes as they are.
 */
export const MessageAnswerSchema = Type.Unsafe<ChatMessage>(
  Type.Object(
    messageProperties(
      Type.Unsafe<ChatMessage['content']>({
        anyOf: [{ type: 'string' }, { type: 'array', items: ContentPartSchema }, { type: 'null' }],
        description: ContentSchema.description,
        examples: ContentSchema.examples,
      }),
    ),
    MESSAGE_OPTIONS,
  ),
)
export type Message = Static<typeof MessageSchema>

/** Roles as an evaluation reads them: `function` is read as `tool`. */
export type MessageRole = Exclude<ChatRole, 'function'>

export interface TextPart {
  type: 'text'
  text: string
}

/** A message as the evaluation reads it (src/rules/conversation.ts `readableMessages`). */
export interface ConversationMessage {
  role: MessageRole
  content: string | readonly TextPart[]
  /** An assistant turn's tool calls: their arguments are read (docs/agents.md). */
  tool_calls?: readonly ToolCall[]
  tool_call_id?: string
  name?: string
}

/** What a message carried that no rule reads (docs/agents.md): a part, or a field of the message. */
export interface NotRead {
  /** The message's index. */
  index: number
  /** The part's index in the message's content; null for a field of the message. */
  part: number | null
  /** The part's type (`image_url`, `input_audio`, `file`, …), or the field's name (`audio`, `function_call`). */
  type: string
}

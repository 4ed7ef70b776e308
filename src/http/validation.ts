import { Ajv, type ErrorObject, type Options } from 'ajv'
import type { FastifyInstance } from 'fastify'
import { type FieldError, pointerToken } from '../errors.js'
import { ID_PATTERN, ID_RULE, NOT_BLANK_PATTERN } from '../schemas/common.js'

const common: Options = {
  allErrors: true,
  allowUnionTypes: true,
  removeAdditional: false,
  useDefaults: false,
  strict: true,
  // Patterns are our own constants; compile them with the `u` flag like JSON Schema says.
  unicodeRegExp: true,
}
/** Bodies are JSON: their types are checked exactly, never coerced ("1" is not a number). */
const bodyAjv = new Ajv({ ...common, coerceTypes: false })
/** Query strings and path segments are text: numbers in them are coerced. */
const textAjv = new Ajv({ ...common, coerceTypes: true })

/** Installs the two validators: strict for bodies, coercing for query and path. */
export function installValidators(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object),
  )
}

/** The most field errors one answer lists; the count in `detail` stays exact. */
export const MAX_FIELD_ERRORS = 100

const typeNames: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
}

function describe(error: ErrorObject): { suffix: string; detail: string } {
  const p = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'additionalProperties':
      return { suffix: `/${pointerToken(String(p.additionalProperty))}`, detail: 'is not a known field' }
    case 'required':
      return { suffix: `/${pointerToken(String(p.missingProperty))}`, detail: 'is required' }
    case 'type': {
      const types = String(p.type).split(',')
      return { suffix: '', detail: `must be ${types.map((t) => typeNames[t] ?? t).join(' or ')}` }
    }
    case 'enum': {
      const allowed = (p.allowedValues as unknown[]).filter((v) => v !== null)
      return { suffix: '', detail: `must be one of: ${allowed.join(', ')}` }
    }
    case 'pattern':
      if (p.pattern === ID_PATTERN) return { suffix: '', detail: ID_RULE }
      if (p.pattern === NOT_BLANK_PATTERN) return { suffix: '', detail: 'must not be blank' }
      return { suffix: '', detail: `must match the pattern ${String(p.pattern)}` }
    case 'minLength':
      return {
        suffix: '',
        detail: p.limit === 1 ? 'must not be empty' : `must be at least ${p.limit} characters`,
      }
    case 'maxLength':
      return { suffix: '', detail: `must be at most ${p.limit} characters` }
    case 'minimum':
      return { suffix: '', detail: `must be at least ${p.limit}` }
    case 'maximum':
      return { suffix: '', detail: `must be at most ${p.limit}` }
    case 'minItems':
      return {
        suffix: '',
        detail: p.limit === 1 ? 'must not be empty' : `must have at least ${p.limit} items`,
      }
    case 'maxItems':
      return { suffix: '', detail: `must have at most ${p.limit} items` }
    case 'uniqueItems':
      return {
        suffix: '',
        detail: `must not repeat an item (items ${Math.min(Number(p.i), Number(p.j))} and ${Math.max(Number(p.i), Number(p.j))} are equal)`,
      }
    default:
      return { suffix: '', detail: error.message ?? 'is invalid' }
  }
}

/** Ajv's errors as contract field errors: one JSON Pointer and one sentence each. */
export function toFieldErrors(errors: readonly ErrorObject[], context: string): FieldError[] {
  const prefix =
    context === 'body'
      ? ''
      : context === 'querystring'
        ? '#/query'
        : `#/${context === 'params' ? 'path' : context}`
  const seen = new Set<string>()
  const out: FieldError[] = []
  for (const error of errors) {
    const { suffix, detail } = describe(error)
    const pointer = `${prefix}${error.instancePath}${suffix}`
    const key = `${pointer}\u0000${detail}`
    if (seen.has(key)) continue
    seen.add(key)
    out.push({ pointer, detail })
  }
  // An empty string also fails the not-blank pattern; saying "must not be empty" is enough.
  const pointers = new Map<string, number>()
  for (const e of out) pointers.set(e.pointer, (pointers.get(e.pointer) ?? 0) + 1)
  return out.filter((e) => e.detail !== 'must not be blank' || pointers.get(e.pointer) === 1)
}

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
    httpPart === 'body' ? bodyAjv.compile(schema as object) : compileText(schema as TextSchema),
  )
}

interface TextSchema {
  properties?: Record<string, { type?: unknown; minimum?: number; maximum?: number }>
}
type TextValidator = ((data: Record<string, unknown>) => boolean) & { errors?: ErrorObject[] | null }

const DECIMAL_INTEGER = /^-?[0-9]+$/

/**
 * A query or path validator whose integers must be written in decimal digits. Ajv's coercion
 * takes whatever `Number()` reads as a whole number (`0x10`, ` 5`, `1e2`, `1.0`, `Infinity`, and
 * digits past 1e308, which become Infinity), and its minimum and maximum skip a number that is
 * not finite: `?limit=1e309` reached the store as an infinite LIMIT and answered 500. Checked
 * here first, other text is a type error and digits beyond the safe range fail the bound they
 * pass, so coercion only ever sees exact, safe integers.
 */
function compileText(schema: TextSchema): TextValidator {
  const validate = textAjv.compile(schema as object)
  const integers = Object.entries(schema.properties ?? {}).filter(([, field]) => field.type === 'integer')
  if (integers.length === 0) return validate as TextValidator
  const checked: TextValidator = (data) => {
    const errors: ErrorObject[] = []
    for (const [key, field] of integers) {
      const text = data?.[key]
      if (typeof text !== 'string') continue
      const error = integerTextError(key, text, field.minimum, field.maximum)
      if (error) errors.push(error)
    }
    const valid = validate(data)
    if (errors.length === 0) {
      checked.errors = validate.errors
      return valid
    }
    const flagged = new Set(errors.map((e) => e.instancePath))
    checked.errors = [...errors, ...(validate.errors ?? []).filter((e) => !flagged.has(e.instancePath))]
    return false
  }
  return checked
}

function integerTextError(
  key: string,
  text: string,
  minimum = Number.MIN_SAFE_INTEGER,
  maximum = Number.MAX_SAFE_INTEGER,
): ErrorObject | undefined {
  const instancePath = `/${pointerToken(key)}`
  if (!DECIMAL_INTEGER.test(text))
    return { instancePath, schemaPath: '', keyword: 'type', params: { type: 'integer' } }
  // Up to 15 digits is exact as a number: Ajv checks the bounds.
  if (text.length <= 15) return undefined
  const value = BigInt(text)
  if (value > BigInt(maximum))
    return { instancePath, schemaPath: '', keyword: 'maximum', params: { comparison: '<=', limit: maximum } }
  if (value < BigInt(minimum))
    return { instancePath, schemaPath: '', keyword: 'minimum', params: { comparison: '>=', limit: minimum } }
  return undefined
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

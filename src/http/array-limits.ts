import { type FieldError, pointerToken } from '../errors.js'

/**
 * The array limits of a body's JSON Schema (`maxItems`), read from its bytes as they arrive, so
 * that a large body holding an array longer than its schema allows is refused at that array's
 * first item too many: neither buffered whole, nor parsed, nor validated. A 20 MiB body of
 * 770,000 content parts cost the event loop some 300 ms for its 422 (JSON.parse, then the garbage
 * of 770,000 objects, then the schema on every one of them); read this way it is refused
 * 270 KB in, in well under a millisecond.
 */

/** What the scan knows of a value's schema: its array limit, and the shapes below it. */
export interface Shape {
  readonly maxItems?: number
  readonly items?: Shape
  readonly properties?: ReadonlyMap<string, Shape>
  readonly additional?: Shape
}

type Schema = Record<string, unknown>
const isSchema = (x: unknown): x is Schema => typeof x === 'object' && x !== null && !Array.isArray(x)

/** Whether a schema may accept a value of one of `types` (it names no `type`, or one of them). */
function mayBe(schema: Schema, ...types: string[]): boolean {
  const { type } = schema
  if (type === undefined) return true
  return types.some((t) => type === t || (Array.isArray(type) && type.includes(t)))
}

/**
 * The shape of a body schema, or null when nothing in it limits an array. `resolve` finds a
 * shared schema that `$ref` names; one it cannot find, and anything nested deeper than the scan
 * follows, limits nothing.
 */
export function shapeOf(schema: unknown, resolve: (ref: string) => unknown = () => undefined): Shape | null {
  const read = (node: unknown, depth: number): Shape | null => {
    if (!isSchema(node) || depth > 32) return null
    if (typeof node.$ref === 'string') return read(resolve(node.$ref), depth + 1)
    const branches = [
      ...(Array.isArray(node.anyOf) ? node.anyOf : []),
      ...(Array.isArray(node.oneOf) ? node.oneOf : []),
    ].filter(isSchema)
    if (branches.length > 0) {
      // Branches that take no array and no object (a `null` beside an array) limit nothing and loosen nothing.
      const containers = branches.filter((branch) => mayBe(branch, 'array', 'object'))
      return containers.length === 0 ? null : merge(containers.map((branch) => read(branch, depth + 1)))
    }
    let maxItems: number | undefined
    let items: Shape | null = null
    if (mayBe(node, 'array')) {
      if (typeof node.maxItems === 'number') maxItems = node.maxItems
      items = read(node.items, depth + 1)
    }
    const properties = new Map<string, Shape>()
    if (isSchema(node.properties))
      for (const [key, value] of Object.entries(node.properties)) {
        const shape = read(value, depth + 1)
        if (shape) properties.set(key, shape)
      }
    const additional = read(node.additionalProperties, depth + 1)
    return make(maxItems, items, properties, additional)
  }
  return read(schema, 0)
}

function make(
  maxItems: number | undefined,
  items: Shape | null,
  properties: Map<string, Shape>,
  additional: Shape | null,
): Shape | null {
  if (maxItems === undefined && !items && properties.size === 0 && !additional) return null
  return {
    ...(maxItems !== undefined ? { maxItems } : {}),
    ...(items ? { items } : {}),
    ...(properties.size > 0 ? { properties } : {}),
    ...(additional ? { additional } : {}),
  }
}

/**
 * The shape a value meets whichever branch of an `anyOf` it takes: an array limit only where
 * every branch has one (the largest), members' shapes merged the same way. A branch that limits
 * nothing (null) may be the one taken, so it leaves nothing limited.
 */
function merge(shapes: (Shape | null)[]): Shape | null {
  if (shapes.some((shape) => shape === null)) return null
  const all = shapes as Shape[]
  const limits = all.map((s) => s.maxItems)
  const maxItems = limits.every((l) => l !== undefined) ? Math.max(...(limits as number[])) : undefined
  const items = all.every((s) => s.items) ? merge(all.map((s) => s.items ?? null)) : null
  const keys = new Set(all.flatMap((s) => [...(s.properties?.keys() ?? [])]))
  const properties = new Map<string, Shape>()
  for (const key of keys) {
    const merged = merge(all.map((s) => s.properties?.get(key) ?? null))
    if (merged) properties.set(key, merged)
  }
  const additional = all.every((s) => s.additional) ? merge(all.map((s) => s.additional ?? null)) : null
  return make(maxItems, items, properties, additional)
}

interface Level {
  readonly array: boolean
  readonly shape: Shape
  /** Items begun so far (an array). */
  count: number
  /** After `[` or `,`: the next value begins an item (an array); the next string is a key (an object). */
  expecting: boolean
  /** The member being read (an object), once its key has ended; null for a key too long to be one the shape names. */
  key: string | null
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
/** A key longer than this is none a schema names: it is not kept. */
const MAX_KEY_BYTES = 4096

/**
 * Reads a JSON body's bytes chunk by chunk, following the containers its shape limits; `write`
 * answers the first array found longer than its limit, as the schema's validator words it, or
 * null. Containers the shape says nothing about are skipped by counting brackets, strings by
 * searching for their end. It checks no syntax: on bytes that are no JSON it stops looking, and
 * leaves them to the parser.
 */
export class ArrayLimitScan {
  private readonly levels: Level[] = []
  /** Brackets open inside a container the shape says nothing about. */
  private skipped = 0
  private inString = false
  /** The backslashes that end the part of a string in the chunk before (a quote after an odd number is escaped). */
  private backslashes = 0
  /** The bytes of the key being read, while it is kept. */
  private keyBytes: Buffer[] | null = null
  private keyLength = 0
  private started = false
  private done = false

  constructor(private readonly root: Shape) {}

  write(chunk: Buffer): FieldError | null {
    if (this.done) return null
    const n = chunk.length
    let i = 0
    while (i < n) {
      if (this.inString) {
        // A string ends at the first quote after it that an even run of backslashes precedes.
        const from = i
        let end = -1
        // Most strings are short and hold no escape: their end is found byte by byte.
        for (let k = i, last = Math.min(n, i + 32); k < last; k++) {
          const byte = chunk[k]
          if (byte === BACKSLASH) break
          if (byte === QUOTE) {
            if (k > from || this.backslashes % 2 === 0) end = k
            break
          }
        }
        for (let search = i; end < 0; ) {
          const quote = chunk.indexOf(QUOTE, search)
          if (quote < 0) break
          if (this.backslashesBefore(chunk, from, quote) % 2 === 0) {
            end = quote
            break
          }
          search = quote + 1
        }
        if (end < 0) {
          this.backslashes = this.backslashesBefore(chunk, from, n)
          this.keep(chunk, from, n)
          break
        }
        this.backslashes = 0
        this.keep(chunk, from, end)
        this.inString = false
        i = end + 1
        if (this.keyBytes) this.endKey()
        continue
      }
      if (this.skipped > 0) {
        let skipped = this.skipped
        while (i < n) {
          const byte = chunk[i++] as number
          if (byte === QUOTE) {
            this.inString = true
            break
          }
          if (byte === 0x7b || byte === 0x5b) skipped++
          else if ((byte === 0x7d || byte === 0x5d) && --skipped === 0) break
        }
        this.skipped = skipped
        continue
      }
      const byte = chunk[i++] as number
      if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue
      const error = this.structure(byte)
      if (error) {
        this.stop()
        return error
      }
      if (this.done) return null
    }
    // A kept key that goes on in the next chunk is copied out of this one, which is not kept.
    if (this.keyBytes && this.keyBytes.length > 0) this.keyBytes = [Buffer.concat(this.keyBytes)]
    return null
  }

  /** One byte outside strings and skipped containers. */
  private structure(byte: number): FieldError | null {
    const top = this.levels[this.levels.length - 1]
    if (top === undefined) {
      // The body itself: an object or an array is followed; anything else, or more after it, is left to the parser.
      if (this.started || (byte !== 0x7b && byte !== 0x5b)) this.stop()
      else this.levels.push(level(byte === 0x5b, this.root))
      this.started = true
      return null
    }
    switch (byte) {
      case 0x2c: // ,
        top.expecting = true
        return null
      case 0x3a: // :
        return null
      case 0x5d: // ]
      case 0x7d: // }
        if (top.array === (byte === 0x5d)) this.levels.pop()
        else this.stop()
        return null
    }
    if (!top.array && top.expecting) {
      // A member's key.
      if (byte !== QUOTE) this.stop()
      top.expecting = false
      this.inString = true
      this.keyBytes = []
      this.keyLength = 0
      return null
    }
    if (top.array && top.expecting) {
      top.expecting = false
      top.count++
      const max = top.shape.maxItems
      if (max !== undefined && top.count > max)
        return { pointer: this.pointer(this.levels.length - 1), detail: `must have at most ${max} items` }
    }
    if (byte === QUOTE) this.inString = true
    else if (byte === 0x7b || byte === 0x5b) {
      const shape = this.childShape(top)
      if (shape === null) this.skipped = 1
      else this.levels.push(level(byte === 0x5b, shape))
    }
    return null
  }

  /** The backslashes just before `at`, back to `from` (a string's start in this chunk) and beyond it. */
  private backslashesBefore(chunk: Buffer, from: number, at: number): number {
    let k = at - 1
    while (k >= from && chunk[k] === BACKSLASH) k--
    return at - 1 - k + (k < from ? this.backslashes : 0)
  }

  /** Keeps bytes of the key being read, up to MAX_KEY_BYTES. */
  private keep(chunk: Buffer, from: number, to: number): void {
    if (this.keyBytes === null || to <= from) return
    this.keyLength += to - from
    if (this.keyLength > MAX_KEY_BYTES) {
      this.keyBytes = null
      const top = this.levels[this.levels.length - 1]
      if (top) top.key = null
      // A shape for every other key would need this one's name in a pointer: not followed further.
      if (top?.shape.additional) this.stop()
      return
    }
    this.keyBytes.push(chunk.subarray(from, to))
  }

  private endKey(): void {
    const top = this.levels[this.levels.length - 1] as Level
    const bytes = this.keyBytes ?? []
    this.keyBytes = null
    try {
      top.key = JSON.parse(`"${Buffer.concat(bytes).toString('utf8')}"`) as string
    } catch {
      this.stop()
    }
  }

  private childShape(top: Level): Shape | null {
    if (top.array) return top.shape.items ?? null
    const named = top.key === null ? undefined : top.shape.properties?.get(top.key)
    return named ?? top.shape.additional ?? null
  }

  /** The JSON Pointer of the container at `depth`. */
  private pointer(depth: number): string {
    let pointer = ''
    for (let d = 0; d < depth; d++) {
      const at = this.levels[d] as Level
      pointer += `/${pointerToken(at.array ? at.count - 1 : (at.key ?? ''))}`
    }
    return pointer
  }

  private stop(): void {
    this.done = true
    this.keyBytes = null
  }
}

const level = (array: boolean, shape: Shape): Level => ({
  array,
  shape,
  count: 0,
  expecting: true,
  key: null,
})

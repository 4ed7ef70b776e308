/**
 * Where an offset falls in a JSON text: the JSON Pointer (RFC 6901) of the innermost value (or
 * member name) that holds it. Tool-call arguments are a JSON text as the model wrote it, and a
 * finding in them names the argument it is in. Pure; reads only as far as the offset, so a text
 * still being written (a streamed call) is located as far as it goes.
 */

/** Nesting past this is not located (""), so no text can exhaust the stack. */
const MAX_DEPTH = 256

class Stop {
  constructor(readonly pointer: string) {}
}

const escapeToken = (token: string) => token.replaceAll('~', '~0').replaceAll('/', '~1')

/**
 * The pointer of the value holding UTF-16 offset `offset` of `text` ("" for the whole text, for
 * an offset between values of the top level, and for a text that is not JSON up to there).
 */
export function jsonPointerAt(text: string, offset: number): string {
  let i = 0
  // The innermost value entered at or before the offset and not yet closed before it.
  let best = ''

  const fail = (): never => {
    throw new Stop('')
  }
  const end = (): never => {
    throw new Stop(best)
  }
  const space = () => {
    while (i < text.length) {
      const c = text.charCodeAt(i)
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break
      i++
    }
    if (i >= text.length) end()
  }
  /** Reads a string at `i` (a quote), returns its value. */
  const string = (): string => {
    const start = i
    i++
    while (i < text.length) {
      const c = text.charCodeAt(i)
      if (c === 0x5c) i += 2
      else if (c === 0x22) {
        i++
        try {
          return JSON.parse(text.slice(start, i)) as string
        } catch {
          return fail()
        }
      } else i++
    }
    return end()
  }
  const value = (path: string, parent: string, depth: number): void => {
    if (depth > MAX_DEPTH) fail()
    space()
    const start = i
    if (start > offset) throw new Stop(best)
    best = path
    const c = text[i]
    if (c === '{') {
      i++
      space()
      if (text[i] === '}') i++
      else
        for (;;) {
          space()
          if (text[i] !== '"') fail()
          const nameStart = i
          const name = string()
          const member = `${path}/${escapeToken(name)}`
          if (offset >= nameStart && offset < i) throw new Stop(member)
          space()
          if (text[i] !== ':') fail()
          i++
          value(member, path, depth + 1)
          space()
          if (text[i] === ',') {
            i++
            continue
          }
          if (text[i] === '}') {
            i++
            break
          }
          fail()
        }
    } else if (c === '[') {
      i++
      space()
      if (text[i] === ']') i++
      else
        for (let n = 0; ; n++) {
          value(`${path}/${n}`, path, depth + 1)
          space()
          if (text[i] === ',') {
            i++
            continue
          }
          if (text[i] === ']') {
            i++
            break
          }
          fail()
        }
    } else if (c === '"') string()
    else {
      while (i < text.length && /[-+.0-9a-zA-Z]/.test(text[i] as string)) i++
      if (i === start) fail()
    }
    if (i > offset) throw new Stop(best)
    best = parent
  }

  try {
    value('', '', 0)
    return ''
  } catch (stop) {
    if (stop instanceof Stop) return stop.pointer
    throw stop
  }
}

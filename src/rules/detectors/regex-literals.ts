/**
 * The literals a regex rule's pattern cannot match without: a set of strings such that every
 * match holds at least one of them (`\b(?:secret|token)\s*[:=]` needs `secret` or `token`). A
 * text that holds none of them cannot match, which `includes` proves at memory speed, where
 * asking RE2 costs about 2 µs of crossing into C++ and a copy of the text each time.
 *
 * A small reading of RE2's syntax, conservative: anything it does not follow exactly (case
 * folding, `\Q…\E`, characters beyond the Basic Multilingual Plane) gives no literals, and every
 * other atom it does not know as a plain character is read as any one character. A property test
 * holds the answer to RE2's matches on random patterns and texts.
 */

/** What a piece of a pattern can match: every string, when few and known, and what any match holds. */
interface Reading {
  /** Every string the piece matches, or null when unknown or too many. */
  exact: string[] | null
  /** Strings one of which every match holds, or null when nothing is known to be required. */
  required: string[] | null
}

/** The most strings an exact reading keeps (`(a|b)(c|d)` is four). */
const MAX_EXACT = 16
const ANY: Reading = { exact: null, required: null }
const EMPTY: Reading = { exact: [''], required: null }

/** Thrown where the reading gives up: the pattern then has no required literals. */
class Unknown extends Error {}

/** The better of two requirements: the one whose shortest literal is longest (rarer in text). */
function better(a: string[] | null, b: string[] | null): string[] | null {
  if (a === null || a.some((s) => s === '')) return b?.some((s) => s === '') ? null : b
  if (b === null || b.some((s) => s === '')) return a
  const shortest = (l: string[]) => Math.min(...l.map((s) => s.length))
  const da = shortest(a)
  const db = shortest(b)
  if (da !== db) return da > db ? a : b
  return a.length <= b.length ? a : b
}

/** An exact set as a requirement: none when it holds the empty string. */
function asRequired(exact: string[] | null): string[] | null {
  return exact === null || exact.some((s) => s === '') ? null : exact
}

function product(a: string[], b: string[]): string[] | null {
  if (a.length * b.length > MAX_EXACT) return null
  return [...new Set(a.flatMap((x) => b.map((y) => x + y)))]
}

const REPEAT = /^\{(\d+)(,(\d*))?\}/
const CLASS = /^\[\^?\]?(?:\[:[a-z]+:\]|\\.|[^\]])*\]/s

/**
 * Literals one of which every match of `pattern` (as RE2 reads it, with the `u` flag) holds, or
 * null when the pattern shows none plainly.
 */
export function requiredLiterals(pattern: string): string[] | null {
  let i = 0

  const alternation = (): Reading => {
    const branches: Reading[] = [sequence()]
    while (pattern[i] === '|') {
      i++
      branches.push(sequence())
    }
    if (branches.length === 1) return branches[0] as Reading
    let exact: string[] | null = []
    let required: string[] | null = []
    for (const b of branches) {
      exact = exact !== null && b.exact !== null ? [...new Set([...exact, ...b.exact])] : null
      if (exact !== null && exact.length > MAX_EXACT) exact = null
      const r = better(asRequired(b.exact), b.required)
      required = required !== null && r !== null ? [...new Set([...required, ...r])] : null
    }
    return { exact, required }
  }

  const sequence = (): Reading => {
    // The exact strings of the run of exact atoms so far, and the best requirement seen.
    let run: string[] = ['']
    let required: string[] | null = null
    let whole = true
    while (i < pattern.length && pattern[i] !== '|' && pattern[i] !== ')') {
      let atom = readAtom()
      // Quantifiers (a lazy `?` may follow each).
      for (;;) {
        const q = pattern[i]
        let min: number
        if (q === '*' || q === '?') {
          i++
          min = 0
        } else if (q === '+') {
          i++
          min = 1
        } else if (q === '{') {
          const m = REPEAT.exec(pattern.slice(i))
          if (m === null) break
          i += m[0].length
          min = Number(m[1])
        } else break
        if (pattern[i] === '?') i++
        const kept = better(asRequired(atom.exact), atom.required)
        atom = min === 0 ? ANY : { exact: null, required: kept }
      }
      const longer = atom.exact === null ? null : product(run, atom.exact)
      if (longer !== null) {
        run = longer
        continue
      }
      // The run ends (at an atom it cannot be followed through, or at too many strings): what it
      // matched is required; so is what this atom requires, and a new run starts after it.
      required = better(better(required, asRequired(run)), better(asRequired(atom.exact), atom.required))
      run = atom.exact ?? ['']
      whole = false
    }
    required = better(required, asRequired(run))
    return { exact: whole ? run : null, required }
  }

  const readAtom = (): Reading => {
    const c = pattern.charCodeAt(i)
    const ch = pattern[i] as string
    if (c >= 0xd800 && c <= 0xdfff) {
      // A character beyond the BMP (or a lone surrogate, which RE2 reads as U+FFFD): any one.
      i += c <= 0xdbff && (pattern.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1
      return ANY
    }
    if (ch === '(') {
      i++
      if (pattern[i] === '?') {
        const m = /^\?(?:P?<[^>]*>|([a-zA-Z-]*)(:|\)))/.exec(pattern.slice(i))
        if (m === null) throw new Unknown()
        // Case folding reads letters more widely than the text holds them: give up.
        if ((m[1] ?? '').split('-')[0]?.includes('i')) throw new Unknown()
        i += m[0].length
        if (m[2] === ')') return EMPTY
      }
      const inner = alternation()
      if (pattern[i] !== ')') throw new Unknown()
      i++
      return inner
    }
    if (ch === '[') {
      const m = CLASS.exec(pattern.slice(i))
      if (m === null) throw new Unknown()
      i += m[0].length
      return ANY
    }
    if (ch === '.') {
      i++
      return ANY
    }
    if (ch === '^' || ch === '$') {
      i++
      return EMPTY
    }
    if (ch === '*' || ch === '+' || ch === '?' || ch === '{' || ch === ')') throw new Unknown()
    if (ch === '\\') return readEscape()
    i++
    return c === 0xfffd ? ANY : { exact: [ch], required: null }
  }

  const readEscape = (): Reading => {
    const next = pattern[i + 1]
    if (next === undefined) throw new Unknown()
    i += 2
    if ('bBAz'.includes(next)) return EMPTY
    if (next === 'n') return { exact: ['\n'], required: null }
    if (next === 't') return { exact: ['\t'], required: null }
    if (next === 'r') return { exact: ['\r'], required: null }
    if (next === 'f') return { exact: ['\f'], required: null }
    if (next === 'v') return { exact: ['\v'], required: null }
    if (next === 'p' || next === 'P' || next === 'x') {
      if (pattern[i] === '{') {
        const end = pattern.indexOf('}', i)
        if (end < 0) throw new Unknown()
        i = end + 1
      } else i += next === 'x' ? 2 : 1
      return ANY
    }
    if (/[0-7]/.test(next)) {
      while (i < pattern.length && /[0-7]/.test(pattern[i] as string)) i++
      return ANY
    }
    if ('dDwWsSC'.includes(next)) return ANY
    // Escaped punctuation stands for itself; any other escape (\Q…\E among them) is not read.
    if (/[!-/:-@[-`{-~]/.test(next)) return { exact: [next], required: null }
    throw new Unknown()
  }

  try {
    const whole = alternation()
    if (i !== pattern.length) return null
    return better(asRequired(whole.exact), whole.required)
  } catch (error) {
    if (error instanceof Unknown) return null
    throw error
  }
}

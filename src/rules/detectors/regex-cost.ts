/**
 * What compiling a pattern in RE2 costs, estimated from its text before anything is compiled:
 * RE2 builds a program whose size is the pattern's atoms, each as large as the UTF-8 automaton of
 * the characters it matches, repeated as its counted quantifiers say; compiling takes time in
 * proportion. A Unicode property class is the costly atom (`\p{L}` is hundreds of byte ranges:
 * `\p{L}{400}` took 160–300 ms here, a plain `.{1000}` 1 ms), so a 3 KB draft of 64 such
 * patterns once held the event loop for seconds. The figures are upper bounds measured on this
 * machine (bench/README.md, "Two tenants"); RE2 refuses a program past its memory budget, which
 * bounds any one pattern (CEILING_MS).
 */

/** Milliseconds per instance of an atom, by kind. */
const PROPERTY_MS = 0.8
const CLASS_MS = 0.002
const CLASS_CHARACTER_MS = 0.0003
const ANY_MS = 0.002
const LITERAL_MS = 0.0002
/** Every pattern's own cost (parsing, the program's set-up). */
const BASE_MS = 0.02
/** No pattern RE2 accepts, nor one it refuses for its size, took longer than this here. */
export const CEILING_MS = 400

/**
 * The estimated milliseconds RE2 takes to compile `pattern` (with the `u` flag), never above
 * CEILING_MS. Reads the pattern loosely: whatever it does not follow costs as much as a class.
 */
export function regexCompileMs(pattern: string): number {
  let i = 0
  let ignoreCase = false

  const alternation = (): number => {
    let total = sequence()
    while (pattern[i] === '|') {
      i++
      total += sequence()
    }
    return total
  }
  const sequence = (): number => {
    let total = 0
    while (i < pattern.length && pattern[i] !== '|' && pattern[i] !== ')') {
      let atom = atomMs()
      for (;;) {
        const q = pattern[i]
        if (q === '*' || q === '+' || q === '?') i++
        else if (q === '{') {
          const m = /^\{(\d*)(,?)(\d*)\}/.exec(pattern.slice(i, i + 24))
          if (m === null) break
          i += m[0].length
          const low = Number(m[1] || 0)
          // {n} is n copies; {n,} is n and a loop; {n,m} is m.
          const high = m[2] === '' ? low : m[3] === '' ? low + 1 : Number(m[3])
          atom *= Math.max(1, low, high)
        } else break
      }
      total += atom
      if (total > CEILING_MS) return total
    }
    return total
  }
  const scaled = (ms: number) => (ignoreCase ? 2 * ms : ms)
  const atomMs = (): number => {
    const c = pattern[i] as string
    if (c === '(') {
      i++
      const outer = ignoreCase
      if (pattern[i] === '?') {
        const m = /^\?(?:P?<[^>]*>|([a-zA-Z-]*)(:|\)))/.exec(pattern.slice(i, i + 64))
        if (m !== null) {
          i += m[0].length
          const on = (m[1] ?? '').split('-')[0] ?? ''
          if (on.includes('i')) ignoreCase = true
          // (?i) sets the flag for the rest of the enclosing group.
          if (m[2] === ')') return 0
        }
      }
      const ms = alternation()
      ignoreCase = outer
      if (pattern[i] === ')') i++
      return ms
    }
    if (c === '[') {
      const m = /^\[\^?\]?(?:\[:[a-z]+:\]|\\.|[^\]])*\]/s.exec(pattern.slice(i))
      const cls = m?.[0] ?? pattern.slice(i)
      i += cls.length
      if (/\\[pP]/.test(cls)) return scaled(PROPERTY_MS)
      return scaled(CLASS_MS + CLASS_CHARACTER_MS * cls.length)
    }
    if (c === '\\') {
      const next = pattern[i + 1] ?? ''
      i += 2
      if (next === 'p' || next === 'P') {
        if (pattern[i] === '{') i = pattern.indexOf('}', i) + 1 || pattern.length
        else i++
        return scaled(PROPERTY_MS)
      }
      if (next === 'Q') {
        const end = pattern.indexOf('\\E', i)
        const literal = end < 0 ? pattern.slice(i) : pattern.slice(i, end)
        i = end < 0 ? pattern.length : end + 2
        return scaled(LITERAL_MS * literal.length)
      }
      if (next === 'x' && pattern[i] === '{') i = pattern.indexOf('}', i) + 1 || pattern.length
      return scaled(ANY_MS)
    }
    i += c.length
    if (c === '.') return scaled(ANY_MS)
    return scaled(LITERAL_MS)
  }

  let total = alternation()
  // A stray `)`: RE2 refuses the pattern; what follows is read on, costing what it reads.
  while (i < pattern.length && total <= CEILING_MS) {
    i++
    total += alternation()
  }
  return Math.min(CEILING_MS, BASE_MS + total)
}

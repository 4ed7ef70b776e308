/**
 * Keeping the provider's key out of what a client or the log can read. Providers echo a
 * rejected key in their error messages, whole or in part, and an upstream may say anything: a
 * message is scrubbed before it is cut to length (a key straddling the cut would otherwise keep
 * all but its last characters), and in every form the key can take in text.
 */

/** Runs of at least this many characters of a form of the key are redacted: shorter ones say too little to rebuild it. */
const MIN_RUN = 8
const REDACTED = '[REDACTED]'

/** A text with the provider's key removed. */
export type Scrubber = (text: string) => string

/** The forms the key takes in text: as is, percent-encoded, base64 (and URL-safe base64) at each of its 3 alignments, hex. */
function forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8')
  const found = new Set<string>([secret, encodeURIComponent(secret), bytes.toString('hex')])
  for (let pad = 0; pad < 3; pad++) {
    // The key behind `pad` other bytes: the characters that depend on its bytes only.
    const encoded = Buffer.concat([Buffer.alloc(pad), bytes]).toString('base64')
    const from = pad === 0 ? 0 : Math.ceil((pad * 4) / 3)
    const to = Math.floor(((pad + bytes.length) * 4) / 3)
    const inner = encoded.slice(from, to)
    found.add(inner)
    found.add(inner.replace(/\+/g, '-').replace(/\//g, '_'))
  }
  return [...found].filter((form) => form.length >= MIN_RUN)
}

/**
 * Marks, in `covered`, every character of `text` that belongs to a run of MIN_RUN or more
 * characters of `form`, reading `text` without the characters `form` does not use (a key broken
 * by spaces, line breaks, quotes or commas is still found).
 */
function mark(text: string, form: string, covered: Uint8Array): void {
  const alphabet = new Set(form)
  const kept: number[] = []
  let compact = ''
  for (let i = 0; i < text.length; i++) {
    if (!alphabet.has(text[i] as string)) continue
    kept.push(i)
    compact += text[i]
  }
  if (compact.length < MIN_RUN) return
  const windows = new Map<string, number>()
  for (let i = 0; i + MIN_RUN <= form.length; i++) windows.set(form.slice(i, i + MIN_RUN), i)
  for (let i = 0; i + MIN_RUN <= compact.length; i++) {
    if (!windows.has(compact.slice(i, i + MIN_RUN))) continue
    for (let k = i; k < i + MIN_RUN; k++) covered[kept[k] as number] = 1
  }
}

/**
 * A scrubber for `secret`: every run of 8 or more characters of the key (or of its
 * percent-encoded, base64 or hex form), even with other characters between them, becomes
 * `[REDACTED]`. Costs a pass over the text per form: meant for error messages (at most 64 KB),
 * not for whole replies, for which `exactScrubber` is the cheap guard.
 */
export function secretScrubber(secret: string | null): Scrubber {
  if (secret === null || secret.length === 0) return (text) => text
  const all = forms(secret)
  const hexForm = Buffer.from(secret, 'utf8').toString('hex')
  return (text) => {
    if (text.length < MIN_RUN) return text
    const covered = new Uint8Array(text.length)
    // Hex is read in either case; lowering A-F keeps every offset.
    const lowered = text.replace(/[A-F]/g, (c) => c.toLowerCase())
    for (const form of all) mark(form === hexForm ? lowered : text, form, covered)
    if (!covered.includes(1)) return text
    let out = ''
    let i = 0
    while (i < text.length) {
      if (covered[i] !== 1) {
        out += text[i]
        i++
        continue
      }
      // One label for a run, and for the separators inside it.
      let end = i
      while (end < text.length && (covered[end] === 1 || /[\s"',+]/.test(text[end] as string))) end++
      while (end > i && covered[end - 1] !== 1) end--
      out += REDACTED
      i = end
    }
    return out
  }
}

/**
 * A scrubber for whole replies (up to 64 MB): the key's exact forms (as is, percent-encoded,
 * base64 at each alignment, hex) replaced by `[REDACTED]`, at the cost of a few `indexOf` scans.
 */
export function exactScrubber(secret: string | null): Scrubber {
  if (secret === null || secret.length === 0) return (text) => text
  const all = forms(secret)
  return (text) => {
    let out = text
    for (const form of all) if (out.includes(form)) out = out.replaceAll(form, REDACTED)
    return out
  }
}

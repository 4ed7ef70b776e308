// Hard negatives for `prompt_injection`: benign prompts and sentences that contain the trigger
// words a shipped model weighs most (see triggers.mjs), mined from public instruction, QA and
// documentation corpora. Used by the readers of the `mined-*` training sources and of the trigger
// measure sets (held-out triggers mined from corpora never trained on), in readers/.
//
// A unit is a whole prompt when the corpus holds prompts (at most MAX_PROMPT characters), else a
// sentence or a short paragraph of prose. A unit is kept when it contains a trigger (whole words,
// case-folded) and does not look like an attack itself (ATTACK_LIKE); each trigger contributes at
// most PER_TRIGGER units per corpus, chosen with a seeded shuffle, so that common words do not
// crowd out the rest.

import { random } from './random.mjs'

const MAX_PROMPT = 1200
const MAX_SENTENCE = 600
const PER_TRIGGER = 100

// Text that reads as an attack (an override, a persona switch, a prompt leak) is never mined as a
// benign example, even from a benign corpus: documentation about attacks quotes them.
export const ATTACK_LIKE =
  /\b(?:ignore|disregard|forget|override|bypass)\b[^.!?\n]{0,40}\b(?:previous|prior|above|earlier|preceding|all|your|the)\b[^.!?\n]{0,30}\b(?:instructions?|prompts?|rules?|directions?|guidelines?|context|text|messages?|commands?)\b|\bjail ?break|\bDAN\b|developer mode|do anything now|pwned|system prompt|no (?:restrictions|filters|limits)|unfiltered|uncensored|\bpretend (?:to be|you are)|\byou are no longer\b|\bfrom now on,? you\b/i

export function hashString(s) {
  let h = 2166136261
  for (const c of s) h = Math.imul(h ^ c.codePointAt(0), 16777619)
  return h >>> 0
}

export function seededShuffle(items, key, seed = 20240601) {
  const rand = random(seed ^ hashString(key))
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1))
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** A matcher for a list of trigger phrases: returns the first phrase found in a text, or null. */
export function triggerMatcher(phrases) {
  const sorted = [...phrases].sort((a, b) => b.length - a.length)
  const re = new RegExp(
    `(?<![\\p{L}\\p{N}])(?:${sorted.map(escapeRegExp).join('|')})(?![\\p{L}\\p{N}])`,
    'iu',
  )
  return (text) => {
    const m = re.exec(text)
    return m ? m[0].toLowerCase() : null
  }
}

/** Sentences of prose (split after . ! ? followed by a space and a capital or a line break). */
export function sentences(text) {
  return text
    .split(/(?<=[.!?])\s+(?=[A-Z"“(])|\n{2,}/)
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => s.length >= 20 && s.length <= MAX_SENTENCE && /[a-z]/.test(s))
}

/**
 * Picks units that contain a trigger: `units` are {text, path, row, kind, src?}; returns rows in the
 * shape the readers return (sources.mjs) (label 0, category `trigger:<phrase>`). A unit that contains
 * an `exclude` phrase (the held-out triggers, when mining training data) is never picked.
 */
export function mineUnits(units, phrases, key, exclude = []) {
  const match = triggerMatcher(phrases)
  const excluded = exclude.length > 0 ? triggerMatcher(exclude) : () => null
  const byTrigger = new Map()
  // Templated corpora repeat one passage under many questions: a unit whose longest sentence was
  // seen before adds little, so only the first is a candidate.
  const seenCores = new Set()
  for (const u of units) {
    const limit = u.kind === 'prompt' ? MAX_PROMPT : MAX_SENTENCE
    if (typeof u.text !== 'string' || u.text.length > limit || u.text.trim().length < 12) continue
    if (ATTACK_LIKE.test(u.text) || excluded(u.text)) continue
    const t = match(u.text)
    if (!t) continue
    const core = u.text
      .split(/(?<=[.!?])\s+|\n+/)
      .reduce((a, b) => (b.length > a.length ? b : a), '')
      .toLowerCase()
      .replace(/\s+/g, ' ')
    if (seenCores.has(core)) continue
    seenCores.add(core)
    if (!byTrigger.has(t)) byTrigger.set(t, [])
    byTrigger.get(t).push(u)
  }
  const rows = []
  for (const t of [...byTrigger.keys()].sort()) {
    for (const u of seededShuffle(byTrigger.get(t), `${key}/${t}`).slice(0, PER_TRIGGER)) {
      rows.push({
        label: 0,
        category: `trigger:${t}`,
        text: u.text,
        lang: 'en',
        path: u.path,
        row: u.row,
        note: `mined for the trigger "${t}"`,
        ...(u.src ? { src: u.src } : {}),
      })
    }
  }
  return rows
}

/** Strips Markdown/MDX to prose paragraphs: no code fences, tables, imports, HTML or JSX. */
export function markdownProse(md) {
  const out = []
  let fence = false
  for (const line of md.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) {
      fence = !fence
      continue
    }
    if (fence) continue
    if (/^\s*(import |export |<|\||!\[|---|\{)/.test(line)) {
      out.push('')
      continue
    }
    out.push(
      line
        .replace(/^#+\s*/, '')
        .replace(/^\s*[-*+]\s+/, '')
        .replace(/^\s*\d+\.\s+/, '')
        .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replace(/[*_`]+/g, ''),
    )
  }
  return out.join('\n')
}

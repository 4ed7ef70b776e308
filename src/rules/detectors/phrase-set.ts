import { type Folded, fold, isWordAt, isWordBefore, originalEnd, originalStart } from './fold.js'

/** The most entries a phrase set's table may have (16 MB); a larger set follows failure links instead. */
const TABLE_LIMIT = 4_000_000

/** A phrase occurrence in a folded text: UTF-16 span [start, end) and the phrase's position in the list. */
export interface PhraseHit {
  start: number
  end: number
  phrase: number
}

/**
 * A set of folded phrases found as whole words in folded texts, by an Aho–Corasick automaton
 * built once: a search reads each character of the text once, so its cost is linear in the text
 * whatever the phrases (up to the 1,000 phrases of 256 characters a rule may flag), which no
 * alternation regex guarantees. Below TABLE_LIMIT the automaton is a table of next nodes, one
 * lookup a character. A phrase occurs as a whole word when the characters around it
 * are not letters, numbers or marks (Unicode-aware, unlike `\b`). Overlapping occurrences
 * resolve leftmost first, longest at the same start.
 */
export class PhraseSet {
  private readonly next: Map<number, number>[] = [new Map()]
  private readonly depth: number[] = [0]
  /** The phrase ending at a node, or -1. */
  private readonly output: number[] = [-1]
  private fail: Int32Array = new Int32Array(1)
  /** The nearest node down the failure chain with an output, or -1. */
  private dict: Int32Array = new Int32Array(1).fill(-1)
  /** The node whose phrase is reported on reaching each node (itself or `dict`), or -1. */
  private report: Int32Array = new Int32Array(1).fill(-1)
  /**
   * The automaton as a table: for node n and character class k, the next node at
   * `table[n * width + k]`, failure links already followed. Classes number the characters that
   * occur in some phrase from 1; every other character is class 0, which leads back to the root.
   * Null when the table would exceed TABLE_LIMIT entries (then `search` follows links).
   */
  private table: Int32Array | null = null
  private width = 1
  private readonly asciiClass = new Uint16Array(128)
  private readonly otherClass = new Map<number, number>()
  /**
   * For `searchAscii`: the class of each ASCII character as folding sees it (a capital as its
   * lower case, every whitespace character as a space).
   */
  private readonly foldedClass = new Uint16Array(128)
  /**
   * For `searchAscii`: `table` where a node reached by a space stays where it is on another
   * space (the folded text never holds two in a row), so that a whitespace run reads as one.
   */
  private asciiTable: Int32Array | null = null
  /** The character each node is reached by (the root's is -1). */
  private readonly incoming: number[] = [-1]

  /** `phrases` must already be folded (foldPhrase); empty ones are ignored. */
  constructor(phrases: readonly string[]) {
    phrases.forEach((phrase, id) => {
      if (phrase.length === 0) return
      let node = 0
      for (let i = 0; i < phrase.length; i++) {
        const c = phrase.charCodeAt(i)
        const transitions = this.next[node] as Map<number, number>
        let child = transitions.get(c)
        if (child === undefined) {
          child = this.next.length
          transitions.set(c, child)
          this.next.push(new Map())
          this.depth.push((this.depth[node] as number) + 1)
          this.output.push(-1)
          this.incoming.push(c)
        }
        node = child
      }
      if (this.output[node] === -1) this.output[node] = id
    })
    this.link()
  }

  private link(): void {
    const count = this.next.length
    this.fail = new Int32Array(count)
    this.dict = new Int32Array(count).fill(-1)
    const queue: number[] = []
    for (const child of (this.next[0] as Map<number, number>).values()) queue.push(child)
    for (let head = 0; head < queue.length; head++) {
      const node = queue[head] as number
      for (const [c, child] of this.next[node] as Map<number, number>) {
        let f = this.fail[node] as number
        while (f !== 0 && !(this.next[f] as Map<number, number>).has(c)) f = this.fail[f] as number
        const target = (this.next[f] as Map<number, number>).get(c)
        const fallback = target !== undefined && target !== child ? target : 0
        this.fail[child] = fallback
        this.dict[child] = (this.output[fallback] as number) >= 0 ? fallback : (this.dict[fallback] as number)
        queue.push(child)
      }
    }
    this.report = new Int32Array(count)
    for (let node = 0; node < count; node++) {
      this.report[node] = (this.output[node] as number) >= 0 ? node : (this.dict[node] as number)
    }
    this.tabulate(queue)
  }

  /** Builds `table` in breadth-first order, so that each node's failure target is done first. */
  private tabulate(order: readonly number[]): void {
    const chars: number[] = []
    for (const transitions of this.next)
      for (const c of transitions.keys())
        if (this.classOf(c) === 0) {
          chars.push(c)
          if (c < 128) this.asciiClass[c] = chars.length
          else this.otherClass.set(c, chars.length)
        }
    const width = chars.length + 1
    const count = this.next.length
    for (let c = 0; c < 128; c++) {
      const folded = c >= 65 && c <= 90 ? c + 32 : c === 32 || (c >= 9 && c <= 13) ? 32 : c
      this.foldedClass[c] = this.asciiClass[folded] as number
    }
    if (count * width > TABLE_LIMIT) return
    const table = new Int32Array(count * width)
    for (const node of [0, ...order]) {
      const transitions = this.next[node] as Map<number, number>
      const fail = this.fail[node] as number
      for (let k = 1; k < width; k++) {
        const child = transitions.get(chars[k - 1] as number)
        table[node * width + k] = child ?? (node === 0 ? 0 : (table[fail * width + k] as number))
      }
    }
    this.table = table
    this.width = width
    const space = this.asciiClass[32] as number
    if (space === 0) {
      this.asciiTable = table
      return
    }
    const asciiTable = table.slice()
    for (let node = 1; node < count; node++)
      if (this.incoming[node] === 32) asciiTable[node * width + space] = node
    this.asciiTable = asciiTable
  }

  private classOf(c: number): number {
    return c < 128 ? (this.asciiClass[c] as number) : (this.otherClass.get(c) ?? 0)
  }

  /** Whether the set holds no phrase. */
  get empty(): boolean {
    return this.next.length === 1
  }

  /** At a node reporting a phrase that ends at unit `i`: the longest such phrase that is a whole word. */
  private candidate(text: string, i: number, node: number, candidates: PhraseHit[]): void {
    if (isWordAt(text, i + 1)) return
    let hit = this.report[node] as number
    while (hit >= 0) {
      const start = i + 1 - (this.depth[hit] as number)
      if (!isWordBefore(text, start)) {
        candidates.push({ start, end: i + 1, phrase: this.output[hit] as number })
        return
      }
      hit = this.dict[hit] as number
    }
  }

  /**
   * Where, in the original `text` (not folded), the longest suffix of its folded form that starts
   * some phrase begins: a phrase still being written, or one complete whose end a letter to come
   * could still make no whole word. `text.length` when no phrase is under way.
   */
  pendingStart(text: string): number {
    if (this.empty) return text.length
    const folded = fold(text)
    const f = folded.text
    let node = 0
    for (let i = 0; i < f.length; i++) {
      const c = f.charCodeAt(i)
      if (this.table !== null) {
        const k = c < 128 ? (this.asciiClass[c] as number) : (this.otherClass.get(c) ?? 0)
        node = this.table[node * this.width + k] as number
      } else {
        let target = (this.next[node] as Map<number, number>).get(c)
        while (target === undefined && node !== 0) {
          node = this.fail[node] as number
          target = (this.next[node] as Map<number, number>).get(c)
        }
        node = target ?? 0
      }
    }
    // A phrase starts a word: a suffix that starts inside one starts none.
    while (node !== 0 && isWordBefore(f, f.length - (this.depth[node] as number)))
      node = this.fail[node] as number
    const depth = this.depth[node] as number
    return depth === 0 ? text.length : originalStart(folded, f.length - depth)
  }

  /**
   * `unfold(fold(text), search(fold(text).text))` for an ASCII `text`, without folding it: the
   * automaton reads each capital as its lower case and each whitespace run as one space, and a
   * hit's start is found by reading back over its phrase. Null when the set has no table (then
   * fold and search).
   */
  searchAscii(text: string): PhraseMatch[] | null {
    if (this.asciiTable === null) return null
    if (this.empty) return []
    const candidates: PhraseMatch[] = []
    // At a node reporting a phrase that ends at offset `i`: the longest such phrase that is a
    // whole word, as `candidate` decides on the folded text.
    const onHit = (i: number, node: number) => {
      if (isWordAt(text, i + 1)) return
      let hit = this.report[node] as number
      while (hit >= 0) {
        const start = asciiStart(text, i, this.depth[hit] as number)
        if (!isWordBefore(text, start)) {
          candidates.push({ start, end: i + 1, phrase: this.output[hit] as number })
          return
        }
        hit = this.dict[hit] as number
      }
    }
    scanTable(text, this.asciiTable, this.width, this.foldedClass, EMPTY_CLASSES, this.report, onHit)
    if (candidates.length < 2) return candidates
    candidates.sort((a, b) => a.start - b.start || b.end - a.end)
    const matches: PhraseMatch[] = []
    let reached = 0
    for (const candidate of candidates) {
      if (candidate.start >= reached) {
        matches.push(candidate)
        reached = candidate.end
      }
    }
    return matches
  }

  /** Whole-word occurrences in folded `text`, non-overlapping, in order of start. */
  search(text: string): PhraseHit[] {
    if (this.empty) return []
    const candidates: PhraseHit[] = []
    const onHit = (i: number, node: number) => this.candidate(text, i, node, candidates)
    if (this.table !== null) {
      scanTable(text, this.table, this.width, this.asciiClass, this.otherClass, this.report, onHit)
    } else {
      let node = 0
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i)
        let target = (this.next[node] as Map<number, number>).get(c)
        while (target === undefined && node !== 0) {
          node = this.fail[node] as number
          target = (this.next[node] as Map<number, number>).get(c)
        }
        node = target ?? 0
        if ((this.report[node] as number) >= 0) onHit(i, node)
      }
    }
    if (candidates.length < 2) return candidates
    candidates.sort((a, b) => a.start - b.start || b.end - a.end)
    const hits: PhraseHit[] = []
    let reached = 0
    for (const candidate of candidates) {
      if (candidate.start >= reached) {
        hits.push(candidate)
        reached = candidate.end
      }
    }
    return hits
  }
}

/** A phrase occurrence in an original text: UTF-16 span [start, end). */
export interface PhraseMatch {
  start: number
  end: number
  phrase: number
}

/** Maps hits in a folded text back to UTF-16 spans of the original it was folded from. */
export function unfold(folded: Folded, hits: readonly PhraseHit[]): PhraseMatch[] {
  return hits.map((hit) => ({
    start: originalStart(folded, hit.start),
    end: originalEnd(folded, hit.end - 1),
    phrase: hit.phrase,
  }))
}

/** The table-driven scan, kept apart from the class so that V8 compiles its loop on its own. */
function scanTable(
  text: string,
  table: Int32Array,
  width: number,
  asciiClass: Uint16Array,
  otherClass: ReadonlyMap<number, number>,
  report: Int32Array,
  onHit: (i: number, node: number) => void,
): void {
  let node = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    node = table[node * width + (c < 128 ? (asciiClass[c] as number) : (otherClass.get(c) ?? 0))] as number
    if ((report[node] as number) >= 0) onHit(i, node)
  }
}

const EMPTY_CLASSES: ReadonlyMap<number, number> = new Map()

function isAsciiSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13)
}

/**
 * Where, in an ASCII text, the folded characters `depth` back from the one at offset `last`
 * start: a whitespace run is one folded character (a phrase neither starts nor ends with one).
 */
function asciiStart(text: string, last: number, depth: number): number {
  let k = last
  for (let n = 1; n < depth; n++) {
    k--
    if (isAsciiSpace(text.charCodeAt(k))) while (k > 0 && isAsciiSpace(text.charCodeAt(k - 1))) k--
  }
  return k
}

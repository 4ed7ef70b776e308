#!/usr/bin/env node
// Lists the word n-grams a shipped linear model weighs most for one head, as the trigger words
// that hard negatives are mined for, and splits them into a mined list and a held-out list.
//
//   node scripts/detectors/triggers.mjs --model models/prompt_injection.wdm --head injection \
//     --data DIR/prompt_injection.jsonl --out DIR/triggers.json [--top 120] [--held-out 0.3]
//
// Candidates are the word unigrams and bigrams of the benign rows of --data (in at least
// 10 rows each): benign text is where a trigger does harm. A phrase's weight is what the model adds
// for it when met in a text: its words' weights, the weights of its inner word pair, and, per word,
// the mean weight of the character n-grams that start in it (as the model's evidence counts them). The top --top phrases
// (no phrase contained in a stronger one is kept, no phrase of stop words alone) are split by a
// seeded hash of the phrase: --held-out of them are never mined, so that a measure on them shows
// whether the fix generalises to trigger words nobody mined for. Words the benign templates use on
// purpose (--always-mine) are never held out, and --extra phrases (seen over-flagged) are added
// to the mined list whatever their rank.
//
// Runs on the compiled code in dist/ (`npm run build`).
import { readFileSync, writeFileSync } from 'node:fs'
import {
  foldText,
  forEachCharGram,
  pairHash,
  tokenize,
  wordHash,
} from '../../dist/rules/detectors/classifier/features.js'
import { parseModel } from '../../dist/rules/detectors/classifier/linear.js'

const STOP = new Set(
  (
    'a an the and or but of to in on at by for with from as is are was were be been being it its this that these ' +
    'those i you he she we they me him her us them my your his our their what which who whom how when where why ' +
    'do does did not no so if then than there here can could will would should may might must shall have has had ' +
    'all any some each more most other such only own same too very just also into over under about up down out ' +
    'off again once s t one two'
  ).split(' '),
)

export function parseFlags(argv, defaults) {
  const args = { ...defaults }
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, '')
    if (!(key in args)) throw new Error(`unknown option ${argv[i]}`)
    args[key] = argv[++i]
  }
  return args
}

export function fnv(s) {
  let h = 2166136261
  for (const c of s) h = Math.imul(h ^ c.codePointAt(0), 16777619)
  return h >>> 0
}

function main() {
  const args = parseFlags(process.argv.slice(2), {
    model: 'models/prompt_injection.wdm',
    head: 'injection',
    data: '',
    out: '',
    top: '120',
    'held-out': '0.3',
    'min-rows': '10',
    // Words the benign templates use on purpose: never held out, since templates teach them anyway.
    'always-mine':
      'instructions,instruction,write,steps,step,remember,please,ignore,respond,answer,json,previous',
    // Phrases the shipped models were seen to over-flag in benign prompts (issue reports and the
    // benign templates): mined whatever their rank.
    extra:
      'instructions on how to,step-by-step,step by step,please write,from now on,give me,respond only,' +
      'act as,pretend,you are,your answers,system,password,prompt,forget,disregard,override,rules,secret',
  })
  if (!args.data || !args.out) throw new Error('usage: triggers.mjs --data FILE.jsonl --out FILE.json')
  const model = parseModel(readFileSync(args.model))
  const h = model.heads.findIndex((x) => x.name === args.head)
  if (h < 0) throw new Error(`no head ${args.head} in ${args.model}`)
  const head = model.heads[h]
  const mask = (1 << model.header.features.bits) - 1
  const weightOf = (hash) => head.weights[hash & mask] * (hash & 0x80000000 ? -1 : 1) * head.scale

  // Count each n-gram once per benign row.
  const counts = new Map()
  const attackCounts = new Map()
  for (const line of readFileSync(args.data, 'utf8').split('\n')) {
    if (!line.trim()) continue
    const row = JSON.parse(line)
    const folded = foldText(row.text)
    const words = tokenize(folded).map((t) => folded.slice(t.start, t.end))
    const seen = new Set()
    for (let n = 1; n <= 2; n++) {
      for (let i = 0; i + n <= words.length; i++) seen.add(words.slice(i, i + n).join(' '))
    }
    const into = row.label === 0 ? counts : attackCounts
    for (const g of seen) into.set(g, (into.get(g) ?? 0) + 1)
  }

  const minRows = Number(args['min-rows'])
  const scored = []
  for (const [phrase, n] of counts) {
    if (n < minRows) continue
    const words = phrase.split(' ')
    if (words.every((w) => STOP.has(w) || /^\d+$/.test(w))) continue
    if (words.some((w) => w.length > 30)) continue
    const folded = foldText(phrase)
    const tokens = tokenize(folded)
    let weight = 0
    for (const [t, token] of tokens.entries()) {
      weight += weightOf(wordHash(folded, token))
      if (t > 0) weight += weightOf(pairHash(folded, tokens[t - 1], token))
    }
    for (const token of tokens) {
      let chars = 0
      forEachCharGram(folded, token.start, token.end, (hash) => {
        chars += weightOf(hash)
      })
      weight += chars / Math.max(1, token.end - token.start)
    }
    scored.push({ phrase, weight, benignRows: n, attackRows: attackCounts.get(phrase) ?? 0 })
  }
  scored.sort((a, b) => b.weight - a.weight || (a.phrase < b.phrase ? -1 : 1))

  // Keep the strongest phrases. A phrase with one content word stands for that word ("and start"
  // is mined as "start"); a phrase inside a stronger kept one adds nothing.
  const top = []
  for (const s of scored) {
    if (top.length >= Number(args.top)) break
    const content = s.phrase.split(' ').filter((w) => !STOP.has(w))
    if (content.length === 0 || content.some((w) => w.length < 3 || /\d/.test(w))) continue
    const phrase = content.length === 1 ? content[0] : s.phrase
    if (top.some((t) => ` ${t.phrase} `.includes(` ${phrase} `) || ` ${phrase} `.includes(` ${t.phrase} `)))
      continue
    top.push({ ...s, phrase, ...(phrase !== s.phrase ? { from: s.phrase } : {}) })
  }
  for (const phrase of args.extra.split(',').filter(Boolean)) {
    if (top.some((t) => t.phrase === phrase)) continue
    const s = scored.find((x) => x.phrase === phrase)
    top.push({
      phrase,
      weight: s?.weight ?? 0,
      benignRows: s?.benignRows ?? 0,
      attackRows: s?.attackRows ?? 0,
      extra: true,
    })
  }
  const share = Number(args['held-out'])
  const heldOut = []
  const mined = []
  const alwaysMined = new Set(args['always-mine'].split(',').filter(Boolean))
  for (const t of top) {
    const out = !t.extra && !alwaysMined.has(t.phrase) && (fnv(`held-out/${t.phrase}`) % 1000) / 1000 < share
    ;(out ? heldOut : mined).push(t)
  }
  const round = (t) => ({ ...t, weight: Math.round(t.weight * 1000) / 1000 })
  const out = {
    model: args.model,
    modelSha256: model.header.sha256,
    head: args.head,
    candidates: `word 1-2-grams in at least ${minRows} benign rows of ${args.data}`,
    weight: 'word + inner pair + per-word mean character n-gram weights (logit units)',
    mined: mined.map(round),
    heldOut: heldOut.map(round),
  }
  writeFileSync(args.out, `${JSON.stringify(out, null, 2)}\n`)
  process.stdout.write(
    `${top.length} triggers: ${mined.length} mined, ${heldOut.length} held out -> ${args.out}\n` +
      `mined: ${mined.map((t) => t.phrase).join(' | ')}\nheld out: ${heldOut.map((t) => t.phrase).join(' | ')}\n`,
  )
}

if (import.meta.url === `file://${process.argv[1]}`) main()

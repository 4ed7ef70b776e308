import { englishDataset, englishRecommendedTransformers, RegExpMatcher } from 'obscenity'
import { TOXICITY_CATEGORIES, type ToxicityCategory } from '../../schemas/rule-vocabulary.js'
import type { Finding, TargetText } from '../types.js'
import { CodePointIndex } from './code-points.js'
import { foldPhrase, foldTarget } from './fold.js'
import { PhraseSet, unfold } from './phrase-set.js'
import type { TextScore } from './types.js'

// The categories are the API's list (docs/policies.md).
export { TOXICITY_CATEGORIES, type ToxicityCategory } from '../../schemas/rule-vocabulary.js'

/**
 * How much one hit weighs, by how unambiguous it is: 0.9 for a slur or a first-person threat,
 * down to 0.3 for an anatomical word that is as often medical as abusive. With the default
 * threshold of 0.5 a single hit of 0.6 or more fails a rule; milder words need company.
 */
const SEVERE = 0.9
const STRONG = 0.8
const CLEAR = 0.6
const MILD = 0.45
const FAINT = 0.3

/**
 * obscenity's English dataset (maintained, with leetspeak, confusable and repeated-letter
 * handling: `b1tch`, `ｆｕｃｋ`, `fuuuck`) mixes slurs, sexual terms and swearing; each of its
 * words is given its category and weight here. A word not listed is profanity of CLEAR weight.
 */
const DATASET_WORDS: Readonly<Record<string, readonly [ToxicityCategory, number]>> = {
  abeed: ['hate', SEVERE],
  abo: ['hate', SEVERE],
  africoon: ['hate', SEVERE],
  arabush: ['hate', SEVERE],
  boonga: ['hate', SEVERE],
  chingchong: ['hate', SEVERE],
  chink: ['hate', SEVERE],
  kike: ['hate', SEVERE],
  nigger: ['hate', SEVERE],
  tranny: ['hate', STRONG],
  fag: ['hate', STRONG],
  dyke: ['hate', CLEAR],
  negro: ['hate', MILD],
  retard: ['harassment', CLEAR],
  spastic: ['harassment', CLEAR],
  slut: ['harassment', STRONG],
  whore: ['harassment', STRONG],
  rape: ['violence', SEVERE],
  bestiality: ['sexual', STRONG],
  incest: ['sexual', CLEAR],
  blowjob: ['sexual', CLEAR],
  buttplug: ['sexual', CLEAR],
  cum: ['sexual', CLEAR],
  deepthroat: ['sexual', CLEAR],
  dildo: ['sexual', CLEAR],
  doggystyle: ['sexual', CLEAR],
  'double penetration': ['sexual', CLEAR],
  ejaculate: ['sexual', MILD],
  felch: ['sexual', CLEAR],
  fellatio: ['sexual', CLEAR],
  'finger bang': ['sexual', CLEAR],
  fisting: ['sexual', CLEAR],
  gangbang: ['sexual', CLEAR],
  handjob: ['sexual', CLEAR],
  hentai: ['sexual', CLEAR],
  'jerk off': ['sexual', CLEAR],
  jizz: ['sexual', CLEAR],
  lubejob: ['sexual', CLEAR],
  masturbate: ['sexual', MILD],
  orgasm: ['sexual', MILD],
  orgy: ['sexual', CLEAR],
  porn: ['sexual', CLEAR],
  semen: ['sexual', FAINT],
  anal: ['sexual', FAINT],
  anus: ['sexual', FAINT],
  boob: ['sexual', FAINT],
  penis: ['sexual', FAINT],
  vagina: ['sexual', FAINT],
  sex: ['sexual', FAINT],
  tit: ['sexual', FAINT],
  hooker: ['sexual', MILD],
  cunt: ['profanity', STRONG],
  fuck: ['profanity', CLEAR],
  bitch: ['profanity', CLEAR],
  pussy: ['profanity', CLEAR],
  twat: ['profanity', CLEAR],
  shit: ['profanity', MILD],
  bastard: ['profanity', MILD],
  cock: ['profanity', MILD],
  dick: ['profanity', MILD],
  prick: ['profanity', MILD],
  wank: ['profanity', MILD],
  cuck: ['profanity', MILD],
  ass: ['profanity', FAINT],
  arse: ['profanity', FAINT],
  bollocks: ['profanity', FAINT],
  piss: ['profanity', FAINT],
  turd: ['profanity', FAINT],
  scat: ['profanity', FAINT],
}

/**
 * Our own short lexicons for what a swear-word list does not cover: phrases of hate, harassment,
 * sexual solicitation, threats of violence and self-harm. Matched as whole words after NFKC and
 * case folding, like keywords rules. Kept short on purpose: a phrase belongs here only if it is
 * abusive in nearly every context (no "kill the process", no "shoot a photo").
 */
const LEXICON: readonly (readonly [ToxicityCategory, number, readonly string[]])[] = [
  [
    'hate',
    SEVERE,
    ['subhuman', 'subhumans', 'untermensch', 'heil hitler', 'white power', 'gas the jews', 'master race'],
  ],
  ['hate', STRONG, ['inferior race', 'racial purity', 'go back to your country', 'should be exterminated']],
  [
    'harassment',
    STRONG,
    [
      'kill yourself',
      'kys',
      'go die',
      'i hope you die',
      'you should die',
      'nobody loves you',
      'you are worthless',
      "you're worthless",
      'you are pathetic',
      "you're pathetic",
      'you disgust me',
    ],
  ],
  [
    'harassment',
    MILD,
    ['idiot', 'idiots', 'moron', 'morons', 'imbecile', 'stupid', 'loser', 'dumbass', 'shut up', 'scum'],
  ],
  [
    'sexual',
    STRONG,
    ['send nudes', 'send me nudes', 'nude pics', 'naked pics', 'sexual favors', 'sexual favours'],
  ],
  [
    'violence',
    SEVERE,
    [
      'i will kill you',
      "i'll kill you",
      'i am going to kill you',
      "i'm going to kill you",
      'gonna kill you',
      'i will murder you',
      'i will shoot you',
      'i will stab you',
      'slit your throat',
      'beat you to death',
      'bomb threat',
      'mass shooting',
    ],
  ],
  ['violence', MILD, ['behead', 'beheading', 'torture', 'massacre']],
  [
    'self_harm',
    SEVERE,
    [
      'kill myself',
      'killing myself',
      'end my life',
      'take my own life',
      'want to die',
      'wanna die',
      'cut myself',
      'cutting myself',
      'hurt myself',
      'hang myself',
    ],
  ],
  ['self_harm', MILD, ['suicide', 'suicidal', 'self harm', 'self-harm', 'overdose']],
]

const PHRASES = LEXICON.flatMap(([category, weight, phrases]) =>
  phrases.map((phrase) => ({ category, weight, phrase: foldPhrase(phrase) })),
)

interface Hit {
  category: ToxicityCategory
  weight: number
  start: number
  end: number
}

/**
 * The offline toxicity scorer (`method` heuristic, used without a judge). Every hit of a judged
 * category counts, and hits combine as independent evidence: score = 1 − Π(1 − weight). One
 * severe hit scores 0.9, one mild hit 0.45, two mild hits 0.70, three faint ones 0.66.
 *
 * Cost: obscenity dominates, 0.3–0.9 ms for 1 KB and 40–60 ms for 100 KB (bench/detectors.mjs,
 * on a shared 2-core machine): its transformers walk the text per code point and each word is a
 * regex over the result. It runs only when a judged category needs it, and heuristics run only
 * when no judge is configured.
 */
export function toxicityHeuristic(categories: readonly string[] | null): (text: TargetText) => TextScore {
  const judged = new Set<string>(categories ?? TOXICITY_CATEGORIES)
  const phrases = PHRASES.filter((p) => judged.has(p.category))
  const set = new PhraseSet(phrases.map((p) => p.phrase))
  const datasetJudged = TOXICITY_CATEGORIES.some(
    (category) =>
      judged.has(category) &&
      (category === 'profanity' || Object.values(DATASET_WORDS).some(([c]) => c === category)),
  )
  // Compiling obscenity's matcher costs 1–3 ms (14 ms the first time in a process): once per rule.
  const matcher = datasetJudged
    ? new RegExpMatcher({ ...englishDataset.build(), ...englishRecommendedTransformers })
    : undefined

  return (target: TargetText): TextScore => {
    const text = target.text
    const hits: Hit[] = []
    if (matcher !== undefined) {
      for (const match of matcher.getAllMatches(text, true)) {
        const word = englishDataset.getPayloadWithPhraseMetadata(match).phraseMetadata?.originalWord ?? ''
        const [category, weight] = DATASET_WORDS[word] ?? ['profanity', CLEAR]
        // obscenity's end index is inclusive (the low surrogate of a last astral character).
        if (judged.has(category))
          hits.push({ category, weight, start: match.startIndex, end: match.endIndex + 1 })
      }
    }
    if (!set.empty) {
      const folded = foldTarget(target)
      for (const m of unfold(folded, set.search(folded.text))) {
        const phrase = phrases[m.phrase] as (typeof phrases)[number]
        hits.push({ category: phrase.category, weight: phrase.weight, start: m.start, end: m.end })
      }
    }
    if (hits.length === 0) return { score: 0, reason: null, findings: [] }
    hits.sort((a, b) => a.start - b.start || b.end - a.end)
    let clean = 1
    const counts = new Map<ToxicityCategory, number>()
    for (const hit of hits) {
      clean *= 1 - hit.weight
      counts.set(hit.category, (counts.get(hit.category) ?? 0) + 1)
    }
    const index = new CodePointIndex(text)
    const findings: Finding[] = hits.map((hit) => index.finding('toxicity', target, hit.start, hit.end))
    const named = TOXICITY_CATEGORIES.filter((c) => counts.has(c)).map((c) => `${c} (${counts.get(c)})`)
    return { score: round(1 - clean), reason: `lexicon hits: ${named.join(', ')}`, findings }
  }
}

function round(score: number): number {
  return Math.round(score * 1000) / 1000
}

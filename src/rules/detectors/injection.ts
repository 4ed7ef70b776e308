import type { Finding, TargetText } from '../types.js'
import { CodePointIndex } from './code-points.js'
import { foldTarget, originalEnd, originalStart } from './fold.js'
import type { HeuristicScore } from './types.js'

/**
 * Known prompt-injection and jailbreak phrasings, each with a weight: how sure a match alone
 * makes us. They run on the folded text (NFKC, lower case, zero-width characters dropped, every
 * run of whitespace one space), so `ＩＧＮＯＲＥ  previous\u200b instructions` reads as plain
 * words. Every gap is a bounded repetition of whole words or of a class that excludes what
 * follows, so each pattern is linear in the text (test/unit/rules/heuristics.test.ts).
 */
interface Signal {
  label: string
  weight: number
  pattern: RegExp
}

const DET = '(?:(?:all|any|every|each|the|your|my|of|these|those|its|that|this|such) ){0,3}'
const WHEN =
  '(?:(?:previous|previously|prior|above|earlier|preceding|former|initial|original|existing|old|past|current|system|developer|safety|programmed|given|hidden) ){0,2}'
const RULES =
  '(?:instructions?|prompts?|rules|directions?|directives?|guidelines|commands?|orders|constraints|restrictions|programming|guardrails|polic(?:y|ies)|filters)'

const SIGNALS: readonly Signal[] = [
  {
    label: 'instruction override',
    weight: 0.9,
    pattern: new RegExp(
      `\\b(?:ignore|disregard|forget|skip|bypass|override|abandon|neglect|overrule) ${DET}${WHEN}${RULES}\\b`,
      'g',
    ),
  },
  {
    label: 'instruction override',
    weight: 0.8,
    pattern:
      /\b(?:ignore|disregard|forget) (?:everything|all|anything|the text|what) ?(?:above|before|prior|you were told|you have been told|i said before)\b/g,
  },
  {
    label: 'instruction override',
    weight: 0.8,
    pattern: /\b(?:ignore|disregard|forget) (?:the|all) (?:above|foregoing)\b/g,
  },
  {
    label: 'instruction override',
    weight: 0.7,
    pattern:
      /\bdo not (?:follow|obey|apply) (?:your|the|any) (?:(?:previous|original|system|safety) )?(?:rules|guidelines|instructions|policies)\b/g,
  },
  {
    label: 'new instructions',
    weight: 0.5,
    pattern: /\b(?:new|updated|real|actual|true|revised) (?:instructions|rules|task|system prompt) ?:/g,
  },
  {
    label: 'jailbreak persona',
    weight: 0.9,
    pattern:
      /\b(?:you are|you're) now (?:a |an |in )?(?:dan|jailbroken|unfiltered|uncensored|unrestricted|unchained|evil|free from)\b/g,
  },
  { label: 'jailbreak persona', weight: 0.9, pattern: /\bdo anything now\b/g },
  { label: 'jailbreak persona', weight: 0.8, pattern: /\b(?:dan|stan|dude|aim) mode\b/g },
  { label: 'jailbreak', weight: 0.6, pattern: /\bjailbr(?:eak|eaks|eaking|oken)\b/g },
  {
    label: 'privileged mode',
    weight: 0.45,
    pattern: /\b(?:developer|god|sudo|admin|debug|maintenance|unrestricted) mode\b/g,
  },
  {
    label: 'no restrictions',
    weight: 0.85,
    pattern:
      /\b(?:pretend|imagine|act|behave|respond|answer|assume)\b[^.!?]{0,40}?\b(?:no|without|free of|free from|zero) (?:(?:any|your|the|content|safety|ethical|moral) ){0,2}(?:restrictions|limits|limitations|filters|rules|guidelines|censorship|boundaries|ethics|morals|guardrails)\b/g,
  },
  {
    label: 'no restrictions',
    weight: 0.6,
    pattern:
      /\b(?:bypass|disable|remove|turn off|ignore|without) (?:(?:any|all|your|the|content|safety|ethical|moral) ){0,2}(?:restrictions|limitations|filters|guardrails|censorship|safeguards|safety guidelines|content polic(?:y|ies))\b/g,
  },
  {
    label: 'system prompt extraction',
    weight: 0.85,
    pattern:
      /\b(?:reveal|print|show|display|output|repeat|tell|give|share|leak|dump|write out|recite|spell out|what (?:is|are|was|were)) (?:(?:me|us|your|the|all|of|full|entire|exact|original|hidden|secret|initial|complete|verbatim) ){0,4}(?:system prompt|system message|initial prompt|hidden prompt|pre-?prompt|secret instructions|hidden instructions|original instructions|initial instructions)s?\b/g,
  },
  {
    label: 'system prompt extraction',
    weight: 0.75,
    pattern:
      /\b(?:reveal|print|show|display|output|repeat|tell|give|share|leak|dump|write out|recite|spell out|what (?:is|are|were)) (?:me |us )?your (?:(?:full|entire|exact|original|initial|complete|hidden|secret) ){0,2}(?:instructions|prompt|rules|guidelines|directives|configuration)\b/g,
  },
  {
    label: 'system prompt extraction',
    weight: 0.8,
    pattern:
      /\b(?:repeat|print|output|copy|reproduce) (?:everything|all|the text|the words|all the text|the text) (?:above|before|prior)\b/g,
  },
  { label: 'system prompt mention', weight: 0.35, pattern: /\bsystem prompt\b/g },
  {
    label: 'role override',
    weight: 0.6,
    pattern: /\bfrom now on,? (?:you are|you will|you'll|act as|respond as|behave as|you must|pretend)\b/g,
  },
  {
    label: 'role override',
    weight: 0.85,
    pattern:
      /\b(?:act|pose|roleplay|role-play|role play|pretend to be) as (?:an? )?(?:unrestricted|unfiltered|uncensored|evil|jailbroken|rogue|amoral)\b/g,
  },
  {
    label: 'role override',
    weight: 0.8,
    pattern:
      /\byou are no longer (?:an? )?(?:ai|assistant|language model|chatbot|bound|restricted|chatgpt|claude)\b/g,
  },
  { label: 'role override', weight: 0.4, pattern: /\bstay in character\b/g },
  {
    label: 'prompt delimiter spoofing',
    weight: 0.6,
    pattern: /<\|im_start\|>|<\|system\|>|\[\/?inst\]|<<\/?sys>>|### (?:system|instruction)s?:|\[system\]/g,
  },
  {
    label: 'obfuscation',
    weight: 0.4,
    pattern:
      /\b(?:decode|decrypt|deobfuscate|translate|convert) (?:(?:this|the following|it|from|the) ){0,2}(?:base64|base 64|rot13|rot-13|hex|binary|morse)\b/g,
  },
  { label: 'obfuscation', weight: 0.4, pattern: /\b(?:base64|rot13)[- ]?(?:encoded|decode[ds]?)\b/g },
]

/** A long run of base64 (both cases and digits), read in the original text: obfuscated content. */
const BASE64_BLOB = /[A-Za-z0-9+/]{120,}={0,2}/g
const BASE64_WEIGHT = 0.3

/**
 * The offline prompt-injection scorer (`method` heuristic, used without a judge). Each kind of
 * signal counts once, at its strongest match, and kinds combine as independent evidence:
 * score = 1 − Π(1 − weight). "Ignore all previous instructions" alone scores 0.9; a mention of
 * "system prompt" 0.35; "developer mode" plus a base64 blob 0.62.
 */
export function injectionHeuristic(): (text: TargetText) => HeuristicScore {
  return (target: TargetText): HeuristicScore => {
    const text = target.text
    const folded = foldTarget(target)
    const spans: { start: number; end: number }[] = []
    const strongest = new Map<string, number>()
    for (const signal of SIGNALS) {
      signal.pattern.lastIndex = 0
      for (let m = signal.pattern.exec(folded.text); m !== null; m = signal.pattern.exec(folded.text)) {
        if (m[0].length === 0) {
          signal.pattern.lastIndex++
          continue
        }
        spans.push({
          start: originalStart(folded, m.index),
          end: originalEnd(folded, m.index + m[0].length - 1),
        })
        strongest.set(signal.label, Math.max(strongest.get(signal.label) ?? 0, signal.weight))
      }
    }
    BASE64_BLOB.lastIndex = 0
    for (let m = BASE64_BLOB.exec(text); m !== null; m = BASE64_BLOB.exec(text)) {
      const blob = m[0]
      if (/\d/.test(blob) && /[a-z]/.test(blob) && /[A-Z]/.test(blob)) {
        spans.push({ start: m.index, end: m.index + blob.length })
        strongest.set('obfuscation', Math.max(strongest.get('obfuscation') ?? 0, BASE64_WEIGHT))
      }
    }
    if (spans.length === 0) return { score: 0, reason: null, findings: [] }
    let clean = 1
    for (const weight of strongest.values()) clean *= 1 - weight
    spans.sort((a, b) => a.start - b.start || b.end - a.end)
    const index = new CodePointIndex(text)
    const findings: Finding[] = spans.map((s) => index.finding('prompt_injection', target, s.start, s.end))
    return {
      score: Math.round((1 - clean) * 1000) / 1000,
      reason: `known injection phrasings: ${[...strongest.keys()].join(', ')}`,
      findings,
    }
  }
}

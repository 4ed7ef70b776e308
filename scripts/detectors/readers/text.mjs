// Text helpers the readers and the assembly share.

/** A text as texts are compared: trimmed, whitespace runs one space. */
export const normalize = (text) => text.trim().replace(/\s+/g, ' ')

// Language guess for mixed sources (only en / de / fr / es; anything else is left unset).
const STOPWORDS = {
  en: 'the and is are you your to of in that it for with this what how not be on can me my i',
  de: 'der die das und ist nicht ich du sie wir ein eine zu mit auf für wie was ich dich mir mich bitte oder auch',
  fr: 'le la les et est pas je tu vous nous un une des du pour avec que qui dans sur ce mon ma',
  es: 'el la los las y es no yo tú usted un una de del para con que en por como mi muy pero',
}
const STOPWORD_SETS = Object.fromEntries(
  Object.entries(STOPWORDS).map(([k, v]) => [k, new Set(v.split(' '))]),
)

/** 'en', 'de', 'fr' or 'es' when a text's stop words say so, else undefined. */
export function guessLang(text) {
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? []
  if (words.length === 0) return undefined
  const latin = words.filter((w) => /^[\p{Script=Latin}]+$/u.test(w)).length
  if (latin < words.length / 2) return undefined
  let best
  let bestScore = 0
  for (const [lang, set] of Object.entries(STOPWORD_SETS)) {
    const score = words.filter((w) => set.has(w)).length
    if (score > bestScore) {
      best = lang
      bestScore = score
    }
  }
  return bestScore >= 2 || (bestScore >= 1 && words.length <= 4) ? best : undefined
}

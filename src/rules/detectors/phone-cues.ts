import { type CountryCode, Metadata } from 'libphonenumber-js/max'

/**
 * Cue words that announce a phone number ("Telefon:", "ring me on", "電話"), and the regions whose
 * numbering plans a national number after each is read in: the countries where the cue's language
 * is spoken, most likely first. A national number (030 12345678) carries no country, and without
 * a cue it is indistinguishable from an order number, a date or an amount, as nine bare digits
 * are from an SSN; after a cue, it is confirmed in the cue's regions by libphonenumber.
 */

const EN: readonly CountryCode[] = ['GB', 'IE', 'AU', 'NZ', 'IN', 'ZA', 'SG', 'US', 'CA']
const DE: readonly CountryCode[] = ['DE', 'AT', 'CH']
const FR: readonly CountryCode[] = ['FR', 'BE', 'CH', 'LU']
const ES: readonly CountryCode[] = ['ES', 'MX', 'AR', 'CO', 'CL', 'PE']
const IT: readonly CountryCode[] = ['IT', 'CH']
const PT: readonly CountryCode[] = ['BR', 'PT']
const NL: readonly CountryCode[] = ['NL', 'BE']
const PL: readonly CountryCode[] = ['PL']
const TR: readonly CountryCode[] = ['TR']
const NORDIC: readonly CountryCode[] = ['SE', 'NO', 'DK']
const RU: readonly CountryCode[] = ['RU', 'UA', 'BY', 'KZ']
const ZH: readonly CountryCode[] = ['CN', 'TW', 'HK']
const JA: readonly CountryCode[] = ['JP']
const KO: readonly CountryCode[] = ['KR']
const HI: readonly CountryCode[] = ['IN']
const union = (...lists: (readonly CountryCode[])[]): readonly CountryCode[] => [...new Set(lists.flat())]
const ALL = union(EN, DE, FR, ES, IT, PT, NL, PL, TR, NORDIC, RU, ZH, JA, KO)

/**
 * Each cue: a pattern (case-insensitive; `word` ones must stand as words) and its regions. Where
 * languages share a word (telefon, mobile, celular), the one entry lists all their regions.
 */
const CUES: readonly { pattern: string; word: boolean; regions: readonly CountryCode[] }[] = [
  // Shared by most languages: the abbreviations and the messaging services.
  { pattern: String.raw`tel\.?|tlf\.?|fax|whatsapp|sms|gsm|fon`, word: true, regions: ALL },
  { pattern: '☎|📞|📱', word: false, regions: ALL },
  { pattern: String.raw`telefon\p{L}*`, word: true, regions: union(DE, PL, TR, NORDIC) },
  { pattern: String.raw`mobil(?!e)\p{L}*`, word: true, regions: union(DE, NORDIC, TR, PL) },
  { pattern: String.raw`t[ée]l[ée]phon\p{L}*`, word: true, regions: union(EN, FR) },
  { pattern: 'mobiles?', word: true, regions: union(EN, FR) },
  { pattern: String.raw`tel[ée]fono\p{L}*`, word: true, regions: union(ES, IT) },
  { pattern: String.raw`celular\p{L}*`, word: true, regions: union(ES, PT) },
  // English.
  {
    pattern: String.raw`phone[sd]?|phoning|mob\.?|cell(?:phone)?|call(?:s|ed|ing)?|dial|hotline|helpline|landline|contact|ring(?:s|ing)? (?:me|us|him|her|them)|text (?:me|us)|reach (?:me|us)|(?:my|our|your|his|her|their) (?:(?:phone|mobile|cell|contact|home|work|office) )?(?:number|no\.?|#)`,
    word: true,
    regions: EN,
  },
  // German.
  {
    pattern: String.raw`handy\p{L}*|rufnummer\p{L}*|festnetz\p{L}*|anruf\p{L}*|ruf(?:e|en|t)? (?:mich|uns|sie)|erreich\p{L}*|durchwahl`,
    word: true,
    regions: DE,
  },
  // French.
  {
    pattern: String.raw`tél\.?|portable|appel\p{L}*|joindre|joignable|(?:mon|notre|son|votre) num[ée]ro`,
    word: true,
    regions: FR,
  },
  // Spanish.
  { pattern: String.raw`m[óo]vil|ll[áa]m\p{L}*|(?:mi|su|nuestro) n[úu]mero`, word: true, regions: ES },
  // Italian.
  {
    pattern: String.raw`cellulare|chiam\p{L}*|recapito|(?:il mio|il suo|il nostro) numero`,
    word: true,
    regions: IT,
  },
  // Portuguese.
  {
    pattern: String.raw`telefone\p{L}*|telem[óo]vel|lig(?:ue|ar|a-me|ue-me|ação)|contato|contacto|(?:meu|nosso|seu) n[úu]mero`,
    word: true,
    regions: PT,
  },
  // Dutch.
  {
    pattern: String.raw`telefoon\p{L}*|mobiel\p{L}*|bel(?:t)? (?:me|mij|ons)|bellen|gebeld|(?:mijn|ons) (?:telefoon)?nummer`,
    word: true,
    regions: NL,
  },
  // Polish.
  { pattern: String.raw`kom[óo]rk\p{L}*|(?:za)?dzwo\p{L}*|m[óo]j numer`, word: true, regions: PL },
  // Turkish.
  {
    pattern: String.raw`cep\p{L}*|numara\p{L}*|aray[ıi]n\p{L}*|beni ara|irtibat|ileti[şs]im`,
    word: true,
    regions: TR,
  },
  // Swedish, Norwegian, Danish.
  { pattern: 'ring (?:mig|meg|til)', word: true, regions: NORDIC },
  // Russian and Ukrainian.
  { pattern: String.raw`телефон\p{L}*|тел\.?|моб\p{L}*|(?:по)?звон\p{L}*`, word: true, regions: RU },
  // Japanese (電話 is Chinese too), Chinese, Korean, Hindi: no spaces around words.
  { pattern: '電話|でんわ', word: false, regions: union(JA, ['TW', 'HK']) },
  { pattern: '携帯|ケータイ|連絡先|番号', word: false, regions: JA },
  {
    pattern: '电话|手机|手機|联系|聯絡|聯繫|致电|致電|拨打|撥打|号码|號碼',
    word: false,
    regions: ZH,
  },
  { pattern: '전화|휴대폰|핸드폰|연락처|번호', word: false, regions: KO },
  {
    // फ़ोन with its nukta precomposed or not, and without it.
    pattern: String.raw`\u095E\u094B\u0928|\u092B\u093C\u094B\u0928|\u092B\u094B\u0928|मोबाइल|नंबर|नम्बर|संपर्क|कॉल`,
    word: false,
    regions: HI,
  },
]

/** A country named before "number" or "phone" ("my Israeli number", "CN number"): its region. */
const COUNTRIES: ReadonlyMap<string, CountryCode> = new Map(
  Object.entries({
    IL: ['israeli', 'israel'],
    JP: ['japanese', 'japan'],
    CN: ['chinese', 'china', 'cn'],
    GB: ['uk', 'british'],
    IE: ['irish', 'ireland'],
    AU: ['australian', 'australia'],
    DE: ['german', 'germany'],
    AT: ['austrian', 'austria'],
    CH: ['swiss', 'switzerland'],
    FR: ['french', 'france'],
    BE: ['belgian', 'belgium'],
    NL: ['dutch'],
    ES: ['spanish', 'spain'],
    MX: ['mexican', 'mexico'],
    IT: ['italian', 'italy'],
    BR: ['brazilian', 'brazil', 'br'],
    PT: ['portuguese', 'portugal'],
    PL: ['polish', 'poland'],
    TR: ['turkish', 'turkey'],
    IN: ['indian', 'india'],
    KR: ['korean', 'korea'],
    RU: ['russian', 'russia'],
  }).flatMap(([region, names]) => names.map((name) => [name, region as CountryCode] as const)),
)

/**
 * The words that may stand between a cue and its number (Ring me *on*, Sie erreichen mich
 * *unter*, Llámame *al*, Bel me *op*, my Israeli number *is*), besides other cues and
 * punctuation. Any other word there names what the number is (Call center *ticket* 45872319,
 * contact us about *order* 123456789, Mobile revenue rose to 3 456 789): no phone number.
 */
const CONNECTORS: ReadonlySet<string> = new Set([
  // English
  ...['on', 'at', 'is', 'me', 'us', 'him', 'her', 'them', 'my', 'our', 'your', 'his', 'their'],
  ...['via', 'or', 'no', 'nr', 'num', 'number', 'here', 'now', 'today', 'tomorrow', 'anytime', 'direct'],
  ...['directly', 'free', 'toll', 'office', 'home', 'work', 'private', 'line', 'please'],
  // German
  ...['unter', 'an', 'ist', 'lautet', 'mich', 'uns', 'mir', 'nummer', 'oder', 'bitte', 'direkt', 'auf'],
  ...['büro', 'privat', 'zentrale', 'gerne', 'jederzeit'],
  // French
  ...['le', 'au', 'est', 'sur', 'moi', 'nous', 'par', 'ou', 'n°', 'numéro', 'numero', 'mon', 'notre'],
  ...['son', 'votre', 'de', 'bureau', 'domicile'],
  // Spanish, Italian, Portuguese
  ...['al', 'es', 'el', 'en', 'mi', 'su', 'o', 'nº', 'número', 'directo', 'a', 'è', 'il', 'allo'],
  ...['diretto', 'para', 'é', 'ao', 'pelo', 'ou', 'direto', 'meu', 'seu', 'nosso', 'mio', 'suo'],
  // Dutch, Polish, Turkish, Russian, Nordic
  ...['op', 'naar', 'mij', 'ons', 'mijn', 'of', 'pod', 'na', 'numer', 'lub', 'mój', 'moj', 'ise'],
  ...['по', 'номер', 'или', 'мой', 'наш', 'på', 'er', 'til', 'eller', 'mitt', 'mit', 'min'],
  // Particles of Japanese, Chinese, Korean
  ...['は', 'が', 'の', 'で', '是', '为', '為', '은', '는', '이', '가', '로', '으로', '에'],
])

const WORD_BEFORE = String.raw`(?<![\p{L}\p{N}])`
const WORD_AFTER = String.raw`(?![\p{L}\p{N}])`
const COUNTRY_CUE = String.raw`(${[...COUNTRIES.keys()].join('|')}) (?:(?:phone|mobile|cell|contact) )?(?:number|no\.?|phone|mobile|cell|line)`
/** One group per cue, then the country group. */
const PHONE_CUE = new RegExp(
  [
    ...CUES.map(({ pattern, word }) => (word ? `${WORD_BEFORE}(${pattern})${WORD_AFTER}` : `(${pattern})`)),
    `${WORD_BEFORE}${COUNTRY_CUE}${WORD_AFTER}`,
  ].join('|'),
  'giu',
)
/** A whole token that is a cue or holds one (電話番号は). */
const HOLDS_CUE = new RegExp(PHONE_CUE.source, 'iu')
const GAP_TOKEN = /[\p{L}\p{N}\p{M}°º']+/gu

/** Every region a cue names. */
export const CUE_REGIONS: readonly CountryCode[] = union(...CUES.map((cue) => cue.regions), [
  ...COUNTRIES.values(),
])

/** How far before a number its cue may end, in UTF-16 units. */
const CUE_REACH = 30
/** The longest cue the window before a number must hold whole. */
const LONGEST_CUE = 32

/** Whether the text between a cue and its number holds only connectors, cues and punctuation. */
function isGap(gap: string): boolean {
  GAP_TOKEN.lastIndex = 0
  let words = 0
  for (let m = GAP_TOKEN.exec(gap); m !== null; m = GAP_TOKEN.exec(gap)) {
    if (++words > 4) return false
    const word = m[0].toLowerCase()
    if (!CONNECTORS.has(word) && !HOLDS_CUE.test(word)) return false
  }
  return true
}

/**
 * The regions a national number at UTF-16 offset `start` of `text` is read in: those of the cues
 * ending at most CUE_REACH units before it with nothing but connectors between, the nearest
 * cue's first. Empty without a cue.
 */
export function phoneCueRegions(text: string, start: number): readonly CountryCode[] {
  const from = Math.max(0, start - CUE_REACH - LONGEST_CUE)
  const window = text.slice(from, start)
  const found: (readonly CountryCode[])[] = []
  PHONE_CUE.lastIndex = 0
  for (let m = PHONE_CUE.exec(window); m !== null; m = PHONE_CUE.exec(window)) {
    const end = m.index + m[0].length
    if (window.length - end > CUE_REACH || !isGap(window.slice(end))) continue
    const group = m.findIndex((g, i) => i > 0 && g !== undefined)
    if (group <= CUES.length) found.push((CUES[group - 1] as (typeof CUES)[number]).regions)
    else {
      const region = COUNTRIES.get((m[group] as string).toLowerCase())
      if (region !== undefined) found.push([region])
    }
  }
  if (found.length <= 1) return found[0] ?? []
  return union(...found.reverse())
}

/**
 * The metadata's pattern of each cue region's national significant numbers: a superset of its
 * valid numbers, checked in well under a microsecond. libphonenumber-js reads it at run time
 * (`nationalNumberPattern`) without declaring it in its types; should a release drop it, every
 * number fits and the library alone decides.
 */
const PATTERNS: ReadonlyMap<CountryCode, RegExp> = new Map(
  CUE_REGIONS.flatMap((region) => {
    const metadata = new Metadata()
    metadata.selectNumberingPlan(region)
    const plan = metadata.numberingPlan as
      | { nationalNumberPattern?: () => string; nationalPrefixTransformRule?: () => string | undefined }
      | undefined
    // Where dialling rewrites the national number (Argentina's 15, Brazil's carrier codes,
    // Japan's), the digits as written need not match: the library alone decides.
    if (typeof plan?.nationalNumberPattern !== 'function' || plan.nationalPrefixTransformRule?.()) return []
    return [[region, new RegExp(`^(?:${plan.nationalNumberPattern()})$`)] as const]
  }),
)

/**
 * Whether `digits`, a national number's digits, can be a number of `region` by the metadata's
 * pattern: as written, after a one-digit trunk prefix (0, 8, or NANP's 1), or after an
 * international prefix (00). Confirming a candidate costs 10–130 µs a region and a cue may
 * suggest forty: this keeps the library to the regions where the number fits.
 */
export function fitsRegion(region: CountryCode, digits: string): boolean {
  const pattern = PATTERNS.get(region)
  if (pattern === undefined || pattern.test(digits) || digits.startsWith('00')) return true
  const lead = digits.charCodeAt(0)
  return (lead === 48 || lead === 49 || lead === 56) && pattern.test(digits.slice(1))
}

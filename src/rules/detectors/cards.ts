import isLuhnNumberModule from 'validator/lib/isLuhnNumber.js'

// validator's CommonJS modules export the function itself with a `default` property pointing at
// it; its types declare only the ES default. Importing one module costs ~8 ms at start-up where
// the whole package costs ~200 ms.
const isLuhnNumber = isLuhnNumberModule.default

/**
 * Issuer identification ranges and lengths of the card networks that issue cards today (ISO/IEC
 * 7812 prefixes as the networks publish them, checked against the ranges of braintree's
 * credit-card-type and Presidio's card recognizer). validator's own isCreditCard table is not
 * used: its Mastercard pattern accepts any length after a 51–55 prefix. Left out: the catch-all
 * ranges some tables give Maestro (50, 56–59, 6) and Indonesia's GPN (50, 56, 58, 60–63), which
 * would make nearly any Luhn-valid number of 12 to 19 digits a card, and networks that stopped
 * issuing (Laser, Solo, Switch, Bankcard).
 */
const ISSUERS: readonly {
  name: string
  from: number
  to: number
  digits: number
  lengths: readonly number[]
}[] = [
  { name: 'visa', from: 4, to: 4, digits: 1, lengths: [13, 16, 19] },
  { name: 'mastercard', from: 51, to: 55, digits: 2, lengths: [16] },
  { name: 'mastercard', from: 2221, to: 2720, digits: 4, lengths: [16] },
  { name: 'amex', from: 34, to: 34, digits: 2, lengths: [15] },
  { name: 'amex', from: 37, to: 37, digits: 2, lengths: [15] },
  { name: 'discover', from: 6011, to: 6011, digits: 4, lengths: [16, 17, 18, 19] },
  { name: 'discover', from: 644, to: 649, digits: 3, lengths: [16, 17, 18, 19] },
  { name: 'discover', from: 65, to: 65, digits: 2, lengths: [16, 17, 18, 19] },
  { name: 'jcb', from: 3528, to: 3589, digits: 4, lengths: [16, 17, 18, 19] },
  { name: 'diners', from: 300, to: 305, digits: 3, lengths: [14, 15, 16, 17, 18, 19] },
  { name: 'diners', from: 3095, to: 3095, digits: 4, lengths: [14, 15, 16, 17, 18, 19] },
  { name: 'diners', from: 36, to: 36, digits: 2, lengths: [14, 15, 16, 17, 18, 19] },
  { name: 'diners', from: 38, to: 39, digits: 2, lengths: [14, 15, 16, 17, 18, 19] },
  { name: 'unionpay', from: 62, to: 62, digits: 2, lengths: [16, 17, 18, 19] },
  { name: 'unionpay', from: 8100, to: 8171, digits: 4, lengths: [16, 17, 18, 19] },
  { name: 'maestro', from: 5018, to: 5018, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { name: 'maestro', from: 5020, to: 5020, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { name: 'maestro', from: 5038, to: 5038, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { name: 'maestro', from: 5893, to: 5893, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { name: 'maestro', from: 6304, to: 6304, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { name: 'maestro', from: 6759, to: 6763, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { name: 'maestro', from: 676770, to: 676770, digits: 6, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { name: 'maestro', from: 676774, to: 676774, digits: 6, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { name: 'mir', from: 2200, to: 2204, digits: 4, lengths: [16, 17, 18, 19] },
  // Air travel's Universal Air Travel Plan: 15 digits after a 1.
  { name: 'uatp', from: 1, to: 1, digits: 1, lengths: [15] },
  { name: 'dankort', from: 5019, to: 5019, digits: 4, lengths: [16] },
  // India's RuPay (its 65, 353 and 356 fall in Discover's and JCB's ranges).
  { name: 'rupay', from: 60, to: 60, digits: 2, lengths: [16] },
  { name: 'rupay', from: 508, to: 508, digits: 3, lengths: [16] },
  { name: 'rupay', from: 8172, to: 8299, digits: 4, lengths: [16] },
  // Brazil's Elo (its other ranges fall in Visa's, UnionPay's, Discover's and InterPayment's)
  // and Hipercard (606282, in RuPay's 60).
  { name: 'elo', from: 504175, to: 504175, digits: 6, lengths: [16] },
  { name: 'elo', from: 506699, to: 506778, digits: 6, lengths: [16] },
  { name: 'elo', from: 509, to: 509, digits: 3, lengths: [16] },
  // Nigeria's Verve (and 650002–650027, in Discover's 65).
  { name: 'verve', from: 506099, to: 506198, digits: 6, lengths: [16, 18, 19] },
  { name: 'verve', from: 507865, to: 507964, digits: 6, lengths: [16, 18, 19] },
  { name: 'troy', from: 9792, to: 9792, digits: 4, lengths: [16] },
  { name: 'interpayment', from: 636, to: 636, digits: 3, lengths: [16, 17, 18, 19] },
  { name: 'instapayment', from: 637, to: 639, digits: 3, lengths: [16] },
  { name: 'china-t-union', from: 31, to: 31, digits: 2, lengths: [19] },
  { name: 'uzcard', from: 8600, to: 8600, digits: 4, lengths: [16] },
  { name: 'humo', from: 9860, to: 9860, digits: 4, lengths: [16] },
  { name: 'napas', from: 9704, to: 9704, digits: 4, lengths: [16, 19] },
]

/** The issuers by the first digit of their prefix, so that a number is checked against its few. */
const BY_LEAD: readonly (typeof ISSUERS)[number][][] = Array.from({ length: 10 }, (_, d) =>
  ISSUERS.filter((issuer) => Math.floor(issuer.from / 10 ** (issuer.digits - 1)) === d),
)

/** Whether some network's numbers start with this digit (char code): all but 0 and 7. */
export function isIssuerDigit(code: number): boolean {
  return (BY_LEAD[code - 48]?.length ?? 0) > 0
}

/** The network of a card number (digits only), or null when no network issues it. */
export function cardIssuer(digits: string): string | null {
  const issuers = BY_LEAD[digits.charCodeAt(0) - 48]
  if (issuers === undefined) return null
  for (const issuer of issuers) {
    if (!issuer.lengths.includes(digits.length)) continue
    const prefix = Number(digits.slice(0, issuer.digits))
    if (prefix >= issuer.from && prefix <= issuer.to) return issuer.name
  }
  return null
}

/** Whether `digits` is a card number: a network's prefix and length, and a valid Luhn check digit. */
export function isCardNumber(digits: string): boolean {
  return cardIssuer(digits) !== null && isLuhnNumber(digits)
}

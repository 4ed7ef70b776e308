import isLuhnNumberModule from 'validator/lib/isLuhnNumber.js'

// validator's CommonJS modules export the function itself with a `default` property pointing at
// it; its types declare only the ES default. Importing one module costs ~8 ms at start-up where
// the whole package costs ~200 ms.
const isLuhnNumber = isLuhnNumberModule.default

/**
 * Issuer identification ranges and lengths of the card networks (ISO/IEC 7812 prefixes as the
 * networks publish them). validator's own isCreditCard table is not used: its Mastercard pattern
 * accepts any length after a 51–55 prefix.
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
  { name: 'maestro', from: 5018, to: 5018, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { name: 'maestro', from: 5020, to: 5020, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { name: 'maestro', from: 5038, to: 5038, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { name: 'maestro', from: 5893, to: 5893, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { name: 'maestro', from: 6304, to: 6304, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { name: 'maestro', from: 6759, to: 6763, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { name: 'mir', from: 2200, to: 2204, digits: 4, lengths: [16, 17, 18, 19] },
]

/** The network of a card number (digits only), or null when no network issues it. */
export function cardIssuer(digits: string): string | null {
  for (const issuer of ISSUERS) {
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

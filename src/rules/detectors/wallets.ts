import { sha256 } from '@noble/hashes/sha2'
import { keccak_256 } from '@noble/hashes/sha3'
import { bech32, bech32m } from '@scure/base'
import type { Span } from './api-keys.js'

/**
 * Crypto wallet addresses, confirmed by their own checksums with the audited bech32 codec of
 * @scure/base and the hashes of @noble/hashes:
 * - Bitcoin legacy addresses (1…, P2PKH; 3…, P2SH): base58check, whose last four bytes are the
 *   double SHA-256 of the rest, holding a version byte (0 or 5) and a 20-byte hash;
 * - Bitcoin segwit addresses (bc1…, BIP 173 and BIP 350): bech32 for witness version 0 (a 20- or
 *   32-byte program), bech32m for versions 1 to 16 (taproot's bc1p…), in one case;
 * - Ethereum addresses (0x and 40 hex digits): a mixed-case address must carry its EIP-55
 *   checksum (each letter upper case where the Keccak-256 of the lower-case address has a nibble
 *   of 8 or more); one in all lower or all upper case carries none, as EIP-55 allows.
 * Mainnet only: testnet coins are worth nothing and their addresses name no one.
 */
const WALLET_CANDIDATE =
  /(?<![A-Za-z0-9])(?:[13][1-9A-HJ-NP-Za-km-z]{25,34}|bc1[02-9ac-hj-np-z]{8,87}|BC1[02-9AC-HJ-NP-Z]{8,87}|0x[0-9A-Fa-f]{40})(?![A-Za-z0-9])/g

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'
const BASE58_VALUE = new Int8Array(128).fill(-1)
for (let i = 0; i < BASE58.length; i++) BASE58_VALUE[BASE58.charCodeAt(i)] = i
/**
 * The 25 bytes a legacy address encodes (a version byte, a 20-byte hash, a 4-byte checksum), or
 * null when it encodes more. Decoded here rather than by @scure/base's base58check, whose general
 * radix conversion and an exception for each bad checksum cost 15–45 µs a candidate on this
 * machine: text of random base58 words would cost ten times its estimate (src/evaluation/cost.ts).
 * Leading 1s are leading zero bytes, as in Bitcoin's own decoder.
 */
function decodeAddress(candidate: string): Uint8Array | null {
  const bytes = new Uint8Array(25)
  for (let i = 0; i < candidate.length; i++) {
    let carry = BASE58_VALUE[candidate.charCodeAt(i)] as number
    if (carry < 0) return null
    for (let j = 24; j >= 0; j--) {
      carry += (bytes[j] as number) * 58
      bytes[j] = carry & 255
      carry >>= 8
    }
    if (carry !== 0) return null
  }
  // As many leading zero bytes as leading 1s, and no more.
  let ones = 0
  while (candidate.charCodeAt(ones) === 49) ones++
  let zeros = 0
  while (zeros < 25 && bytes[zeros] === 0) zeros++
  return zeros === ones ? bytes : null
}

function isBase58Address(candidate: string): boolean {
  const payload = decodeAddress(candidate)
  if (payload === null || payload[0] !== (candidate[0] === '1' ? 0 : 5)) return false
  const check = sha256(sha256(payload.subarray(0, 21)))
  return (
    check[0] === payload[21] &&
    check[1] === payload[22] &&
    check[2] === payload[23] &&
    check[3] === payload[24]
  )
}

function isSegwitAddress(candidate: string): boolean {
  const address = candidate.toLowerCase()
  if (address.length > 90) return false
  for (const encoding of [bech32, bech32m]) {
    const decoded = encoding.decodeUnsafe(address, 90)
    if (decoded === undefined || decoded.prefix !== 'bc' || decoded.words.length === 0) continue
    const version = decoded.words[0] as number
    if (version > 16 || (version === 0) !== (encoding === bech32)) continue
    const program = encoding.fromWordsUnsafe(decoded.words.slice(1))
    if (program === undefined || program.length < 2 || program.length > 40) continue
    if (version === 0 && program.length !== 20 && program.length !== 32) continue
    return true
  }
  return false
}

const HEX_UPPER = /[A-F]/
const HEX_LOWER = /[a-f]/
function isEthereumAddress(candidate: string): boolean {
  const hex = candidate.slice(2)
  if (!HEX_UPPER.test(hex) || !HEX_LOWER.test(hex)) return true
  const lower = hex.toLowerCase()
  const hash = keccak_256(lower)
  for (let i = 0; i < 40; i++) {
    const c = hex.charCodeAt(i)
    if (c < 65) continue
    const nibble = ((hash[i >> 1] as number) >> (i % 2 === 0 ? 4 : 0)) & 15
    if (nibble >= 8 !== c <= 70) return false
  }
  return true
}

export function isWalletAddress(candidate: string): boolean {
  const first = candidate.charCodeAt(0)
  if (first === 48) return isEthereumAddress(candidate)
  if (first === 98 || first === 66) return isSegwitAddress(candidate)
  return isBase58Address(candidate)
}

export function findWallets(text: string, found: Span[]): void {
  WALLET_CANDIDATE.lastIndex = 0
  for (let m = WALLET_CANDIDATE.exec(text); m !== null; m = WALLET_CANDIDATE.exec(text)) {
    if (isWalletAddress(m[0])) found.push({ start: m.index, end: m.index + m[0].length })
  }
}

/**
 * MAC addresses (IEEE 802 EUI-48): six pairs of hex digits joined by colons or by dashes (one
 * separator throughout), or three groups of four joined by dots as Cisco writes them (with a hex letter: three groups
 * of digits alone are a version or a stamp as often), never part
 * of a longer run of hex groups (an IPv6 address, a key fingerprint). The all-zero address and the
 * broadcast address name no device and are left out.
 */
/**
 * From a MAC address's first separator on: V8 skips to `:`, `-` and `.` quickly, where a pattern
 * starting at its first hex digit tries every a–f of prose (8× the time). The two hex digits
 * before, and what precedes them, are read by hand.
 */
const MAC_TAIL =
  /([:-])(?:[0-9A-Fa-f]{2}\1){4}[0-9A-Fa-f]{2}(?![0-9A-Za-z]|[:.-][0-9A-Fa-f])|\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}(?![0-9A-Za-z]|[:.-][0-9A-Fa-f])/g
const NOT_HEX = /[^0-9A-Fa-f]/g
const HEX_LETTER = /[a-f]/
const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)
const isAsciiAlnum = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
export function findMacAddresses(text: string, found: Span[]): void {
  MAC_TAIL.lastIndex = 0
  for (let m = MAC_TAIL.exec(text); m !== null; m = MAC_TAIL.exec(text)) {
    // Two hex digits before a colon or dash, four before the first dot.
    const lead = m[1] === undefined ? 4 : 2
    const start = m.index - lead
    let ok = start >= 0
    for (let i = start; ok && i < m.index; i++) ok = isHex(text.charCodeAt(i))
    // Not part of a longer run: no letter or digit before, nor a hex digit and a separator.
    const before = text.charCodeAt(start - 1)
    if (ok && start > 0 && isAsciiAlnum(before)) ok = false
    if (
      ok &&
      start > 1 &&
      (before === 58 || before === 46 || before === 45) &&
      isHex(text.charCodeAt(start - 2))
    )
      ok = false
    if (!ok) {
      // The separator may start another candidate's tail: go on from the next character.
      MAC_TAIL.lastIndex = m.index + 1
      continue
    }
    const end = m.index + m[0].length
    const hex = text.slice(start, end).replace(NOT_HEX, '').toLowerCase()
    if (hex === '000000000000' || hex === 'ffffffffffff') continue
    // Three dotted groups of digits alone are as likely a version or a date stamp (2024.1201.1530).
    if (m[1] === undefined && !HEX_LETTER.test(hex)) continue
    found.push({ start, end })
  }
}

import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto'
import type { Clock } from '../clock.js'
import { AppError, conflict, invalid } from '../errors.js'
import type { Store } from '../store/database.js'
import { isUniqueViolation } from '../store/dialect.js'
import {
  completeIdempotencyKey,
  deleteExpiredIdempotencyKeys,
  deleteIdempotencyKey,
  findIdempotencyKey,
  insertIdempotencyKey,
  takeOverIdempotencyKey,
} from '../store/idempotency.repository.js'

/** How long a key replays its first answer. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60
/** A request still "running" after this long died with its process; its key may be reused. */
export const ABANDONED_AFTER_SECONDS = 60

/** A 2xx answer as it went out, to be sent again on a replay. */
export interface StoredAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

/** JSON with object keys sorted, so that the same body always has the same fingerprint. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    )
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** What identifies "the same request": method, path and body. */
export function fingerprint(method: string, path: string, body: unknown): string {
  return sha256(`${method}\n${path}\n${canonicalJson(body)}`)
}

/**
 * Answers can hold secrets (a new API key), so they are encrypted under a key derived from the
 * client's Idempotency-Key, which the store keeps only as a hash: the database alone cannot
 * reveal them.
 */
function cipherKey(idempotencyKey: string, workspaceId: string): Buffer {
  return Buffer.from(hkdfSync('sha256', idempotencyKey, workspaceId, 'warden idempotent answer v1', 32))
}

function seal(answer: StoredAnswer, idempotencyKey: string, workspaceId: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', cipherKey(idempotencyKey, workspaceId), iv)
  const sealed = Buffer.concat([cipher.update(JSON.stringify(answer), 'utf8'), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')
}

function open(sealed: string, idempotencyKey: string, workspaceId: string): StoredAnswer {
  const raw = Buffer.from(sealed, 'base64')
  const decipher = createDecipheriv(
    'aes-256-gcm',
    cipherKey(idempotencyKey, workspaceId),
    raw.subarray(0, 12),
  )
  decipher.setAuthTag(raw.subarray(12, 28))
  return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8'))
}

export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/

export class IdempotencyService {
  constructor(private readonly deps: { store: Store; clock: Clock }) {}

  /**
   * Claims `key` for a request. Returns null when the request should run, or the stored answer
   * to replay. Throws 409 while the first request with the key is running (checked first), and
   * 422 when the key was used with a different request.
   */
  async begin(workspaceId: string, key: string, requestFingerprint: string): Promise<StoredAnswer | null> {
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw invalid([
        { pointer: '#/headers/idempotency-key', detail: 'must be 1 to 255 printable ASCII characters' },
      ])
    }
    const keyHash = sha256(key)
    for (let attempt = 0; attempt < 5; attempt++) {
      const now = this.deps.clock.nowSeconds()
      const claim = {
        fingerprint: requestFingerprint,
        created: now,
        expires_at: now + IDEMPOTENCY_TTL_SECONDS,
      }
      try {
        await insertIdempotencyKey(this.deps.store, {
          workspace_id: workspaceId,
          key_hash: keyHash,
          state: 'running',
          response: null,
          ...claim,
        })
        return null
      } catch (error) {
        if (!isUniqueViolation(error)) throw error
      }
      const row = await findIdempotencyKey(this.deps.store.db, workspaceId, keyHash)
      if (!row) continue
      const abandoned = row.state === 'running' && now - row.created >= ABANDONED_AFTER_SECONDS
      if (row.expires_at <= now || abandoned) {
        if (await takeOverIdempotencyKey(this.deps.store, row, claim)) return null
        continue
      }
      if (row.state === 'running') {
        throw conflict('A request with this Idempotency-Key is still in progress; retry once it has finished')
      }
      if (row.fingerprint !== requestFingerprint) {
        throw new AppError(
          'validation_error',
          'This Idempotency-Key was already used with a different request',
          [
            {
              pointer: '#/headers/idempotency-key',
              detail: 'was already used with a different request; use a new key',
            },
          ],
        )
      }
      if (row.response === null) continue
      return open(row.response, key, workspaceId)
    }
    throw conflict('A request with this Idempotency-Key is still in progress; retry once it has finished')
  }

  /** Stores a 2xx answer for replays. */
  async complete(workspaceId: string, key: string, answer: StoredAnswer): Promise<void> {
    const sealed = seal(answer, key, workspaceId)
    await completeIdempotencyKey(this.deps.store, workspaceId, sha256(key), sealed)
  }

  /** Forgets a key whose request failed, so that it may be retried with the same key. */
  async release(workspaceId: string, key: string): Promise<void> {
    await deleteIdempotencyKey(this.deps.store, workspaceId, sha256(key))
  }

  /** Deletes expired keys; returns how many. */
  async purgeExpired(): Promise<number> {
    return deleteExpiredIdempotencyKeys(this.deps.store, this.deps.clock.nowSeconds())
  }
}

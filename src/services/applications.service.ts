import { randomBytes } from 'node:crypto'
import { v7 as uuidv7 } from 'uuid'
import { conflict, invalid, notFound } from '../errors.js'
import type {
  Application,
  ApplicationCreate,
  ApplicationParameters,
  ApplicationPatch,
} from '../schemas/applications.js'
import {
  deleteApplication,
  findApplication,
  insertApplication,
  listApplications,
  updateApplication,
} from '../store/applications.repository.js'
import type { Store } from '../store/database.js'
import { fromJson, isUniqueViolation, toJson, usesRowLocks } from '../store/dialect.js'
import type { ApplicationRow } from '../store/tables.js'
import { nowSeconds } from './clock.js'
import { mergePatch } from './merge-patch.js'
import { decodeCursor, type Page, toPage } from './pagination.js'
import { assertIfMatch, preconditionFailed } from './preconditions.js'

/** A resource with the entity tag of its current version. */
export interface Versioned<T> {
  resource: T
  etag: string
}

export const newEtag = (): string => randomBytes(12).toString('base64url')

/** `null` when no parameter is set, else all five keys with `null` for the unset ones. */
export function normalizeParameters(input: ApplicationCreate['parameters']): ApplicationParameters | null {
  if (!input) return null
  const parameters: ApplicationParameters = {
    system_prompt: input.system_prompt ?? null,
    temperature: input.temperature ?? null,
    max_tokens: input.max_tokens ?? null,
    top_p: input.top_p ?? null,
    top_k: input.top_k ?? null,
  }
  return Object.values(parameters).every((v) => v === null) ? null : parameters
}

export function toApplication(row: ApplicationRow): Versioned<Application> {
  return {
    resource: {
      id: row.id,
      name: row.name,
      description: row.description,
      provider: row.provider,
      model: row.model,
      parameters: row.parameters === null ? null : fromJson<ApplicationParameters>(row.parameters),
      created: row.created,
      updated: row.updated,
    },
    etag: row.etag,
  }
}

export const applicationNotFound = (id: string) => notFound(`No application "${id}" in this workspace`)

/** An `id` in a PATCH body may only repeat the id in the path. */
export function assertSameId(bodyId: string | undefined, pathId: string): void {
  if (bodyId !== undefined && bodyId !== pathId) {
    throw invalid([
      { pointer: '/id', detail: `cannot be changed: it must equal the id in the path ("${pathId}")` },
    ])
  }
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

export class ApplicationsService {
  constructor(private readonly store: Store) {}

  async create(workspaceId: string, input: ApplicationCreate): Promise<Versioned<Application>> {
    const now = nowSeconds()
    const id = input.id ?? uuidv7()
    const parameters = normalizeParameters(input.parameters)
    try {
      const row = await this.store.write((db) =>
        insertApplication(db, {
          workspace_id: workspaceId,
          id,
          name: input.name,
          description: input.description,
          provider: input.provider ?? null,
          model: input.model ?? null,
          parameters: parameters === null ? null : toJson(parameters),
          etag: newEtag(),
          created: now,
          updated: now,
        }),
      )
      return toApplication(row)
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`An application with id "${id}" already exists`)
      throw error
    }
  }

  async get(workspaceId: string, id: string): Promise<Versioned<Application>> {
    const row = await findApplication(this.store.db, workspaceId, id)
    if (!row) throw applicationNotFound(id)
    return toApplication(row)
  }

  async list(workspaceId: string, limit: number, cursor?: string): Promise<Page<Application>> {
    const after = decodeCursor(cursor) ?? 0
    const rows = await listApplications(this.store.db, workspaceId, after, limit + 1)
    return toPage(
      rows,
      limit,
      (row) => row.seq,
      (row) => toApplication(row).resource,
    )
  }

  /**
   * Applies a JSON merge patch in one transaction: read (locking the row where the store needs
   * it), check If-Match, write. Concurrent writers take turns, so an unconditional patch always
   * applies to the latest version and a conditional one fails with 412 if it lost the race.
   */
  async patch(
    workspaceId: string,
    id: string,
    patch: ApplicationPatch,
    ifMatch: string | undefined,
  ): Promise<Versioned<Application>> {
    assertSameId(patch.id, id)
    return this.store.write(async (trx) => {
      const row = await findApplication(trx, workspaceId, id, usesRowLocks(this.store.dialect))
      if (!row) throw applicationNotFound(id)
      assertIfMatch(ifMatch, row.etag)
      const current = toApplication(row).resource
      const next: Application = {
        ...current,
        name: patch.name ?? current.name,
        description: patch.description ?? current.description,
        provider: patch.provider === undefined ? current.provider : patch.provider,
        model: patch.model === undefined ? current.model : patch.model,
        parameters:
          patch.parameters === undefined
            ? current.parameters
            : normalizeParameters(
                mergePatch(current.parameters ?? {}, patch.parameters) as ApplicationPatch['parameters'],
              ),
      }
      if (sameJson(next, current)) return toApplication(row)
      // The ETag guard is a second line of defence should a lock ever be missing.
      const updated = await updateApplication(trx, row.seq, row.etag, {
        name: next.name,
        description: next.description,
        provider: next.provider,
        model: next.model,
        parameters: next.parameters === null ? null : toJson(next.parameters),
        etag: newEtag(),
        updated: Math.max(nowSeconds(), current.updated),
      })
      if (!updated) throw preconditionFailed()
      return toApplication(updated)
    })
  }

  /** Deletes the application with its policies and their revisions, in one transaction. */
  async delete(workspaceId: string, id: string, ifMatch: string | undefined): Promise<void> {
    await this.store.write(async (trx) => {
      const row = await findApplication(trx, workspaceId, id, usesRowLocks(this.store.dialect))
      if (!row) throw applicationNotFound(id)
      assertIfMatch(ifMatch, row.etag)
      if (!(await deleteApplication(trx, row.seq, row.etag))) throw preconditionFailed()
    })
  }
}

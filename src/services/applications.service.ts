import { v7 as uuidv7 } from 'uuid'
import type { Clock } from '../clock.js'
import { conflict } from '../errors.js'
import type {
  Application,
  ApplicationCreate,
  ApplicationParameters,
  ApplicationPatch,
} from '../schemas/applications.js'
import {
  createApplication,
  deleteApplication,
  findApplication,
  findApplicationDocument,
  findApplicationForUpdate,
  listApplicationDocuments,
  updateApplication,
} from '../store/applications.repository.js'
import type { Store } from '../store/database.js'
import { isUniqueViolation, toJson } from '../store/dialect.js'
import { applicationDocument, applicationFromColumns, type Stored } from '../store/documents.js'
import { mergePatch } from './support/merge-patch.js'
import { decodeCursor, documentPage } from './support/pagination.js'
import { assertIfMatch, preconditionFailed } from './support/preconditions.js'
import { applicationNotFound, assertSameId, newEtag } from './support/records.js'

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

/** The columns of an application row, with its stored text and entity tag. */
function columns(a: Application, stored: Stored) {
  return {
    id: a.id,
    name: a.name,
    description: a.description,
    provider: a.provider,
    model: a.model,
    parameters: a.parameters === null ? null : toJson(a.parameters),
    etag: stored.etag,
    created: a.created,
    updated: a.updated,
    doc: stored.json,
  }
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

export class ApplicationsService {
  constructor(private readonly deps: { store: Store; clock: Clock }) {}

  async create(workspaceId: string, input: ApplicationCreate): Promise<Stored> {
    const now = this.deps.clock.nowSeconds()
    const application: Application = {
      id: input.id ?? uuidv7(),
      name: input.name,
      description: input.description,
      provider: input.provider ?? null,
      model: input.model ?? null,
      parameters: normalizeParameters(input.parameters),
      created: now,
      updated: now,
    }
    const stored = { id: application.id, etag: newEtag(), json: applicationDocument(application) }
    try {
      await createApplication(this.deps.store, { workspace_id: workspaceId, ...columns(application, stored) })
      return stored
    } catch (error) {
      if (isUniqueViolation(error))
        throw conflict(`An application with id "${application.id}" already exists`)
      throw error
    }
  }

  async get(workspaceId: string, id: string): Promise<Stored> {
    const found = await findApplicationDocument(this.deps.store.statements, workspaceId, id)
    if (!found) throw applicationNotFound(id)
    return { id, etag: found.etag, json: found.doc }
  }

  /** The application itself, parsed, for the services that act on its settings (404 if missing). */
  async find(workspaceId: string, id: string): Promise<Application> {
    const row = await findApplication(this.deps.store.statements, workspaceId, id)
    if (!row) throw applicationNotFound(id)
    return applicationFromColumns(row)
  }

  /** One page, as the JSON text of the answer. */
  async list(workspaceId: string, limit: number, cursor?: string): Promise<string> {
    const after = decodeCursor(cursor) ?? 0
    return documentPage(await listApplicationDocuments(this.deps.store.statements, workspaceId, after, limit))
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
  ): Promise<Stored> {
    assertSameId(patch.id, id)
    return this.deps.store.write(async (tx) => {
      const row = await findApplicationForUpdate(tx, workspaceId, id)
      if (!row) throw applicationNotFound(id)
      assertIfMatch(ifMatch, row.etag)
      const current = applicationFromColumns(row)
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
      if (sameJson(next, current)) return { id, etag: row.etag, json: row.doc }
      next.updated = Math.max(this.deps.clock.nowSeconds(), current.updated)
      const stored = { id, etag: newEtag(), json: applicationDocument(next) }
      // The ETag guard is a second line of defence should a lock ever be missing.
      const { created: _created, id: _id, ...changes } = columns(next, stored)
      if (!(await updateApplication(tx.db, row.seq, row.etag, changes))) throw preconditionFailed()
      return stored
    })
  }

  /** Deletes the application with its policies and their revisions, in one transaction. */
  async delete(workspaceId: string, id: string, ifMatch: string | undefined): Promise<void> {
    await this.deps.store.write(async (tx) => {
      const row = await findApplicationForUpdate(tx, workspaceId, id)
      if (!row) throw applicationNotFound(id)
      assertIfMatch(ifMatch, row.etag)
      if (!(await deleteApplication(tx.db, row.seq, row.etag))) throw preconditionFailed()
    })
  }
}

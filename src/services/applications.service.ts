import { randomBytes } from 'node:crypto'
import { v7 as uuidv7 } from 'uuid'
import { conflict } from '../errors.js'
import type { Application, ApplicationCreate, ApplicationParameters } from '../schemas/applications.js'
import { insertApplication } from '../store/applications.repository.js'
import type { Store } from '../store/database.js'
import { fromJson, isUniqueViolation, toJson } from '../store/dialect.js'
import type { ApplicationRow } from '../store/tables.js'
import { nowSeconds } from './clock.js'

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

export class ApplicationsService {
  constructor(private readonly store: Store) {}

  async create(workspaceId: string, input: ApplicationCreate): Promise<Versioned<Application>> {
    const now = nowSeconds()
    const id = input.id ?? uuidv7()
    const parameters = normalizeParameters(input.parameters)
    try {
      const row = await insertApplication(this.store.db, {
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
      })
      return toApplication(row)
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`An application with id "${id}" already exists`)
      throw error
    }
  }
}

import { conflict, invalid, notFound } from '../errors.js'
import type { Policy, PolicyCreate, PolicyRule } from '../schemas/policies.js'
import { applicationExists } from '../store/applications.repository.js'
import type { Store } from '../store/database.js'
import { fromJson, isForeignKeyViolation, isUniqueViolation, toJson } from '../store/dialect.js'
import { insertPolicy, insertPolicyRevision } from '../store/policies.repository.js'
import type { PolicyRow } from '../store/tables.js'
import { newEtag, type Versioned } from './applications.service.js'
import { nowSeconds } from './clock.js'
import { checkRules, normalizeRule } from './rules.js'

export function toPolicy(row: PolicyRow): Versioned<Policy> {
  return {
    resource: {
      id: row.id,
      application_id: row.application_id,
      rules: fromJson<PolicyRule[]>(row.rules),
      target: fromJson<Policy['target']>(row.target),
      definition: row.definition,
      override_response: row.override_response,
      revision: row.revision,
      created: row.created,
      updated: row.updated,
    },
    etag: row.etag,
  }
}

const applicationNotFound = (id: string) => notFound(`No application "${id}" in this workspace`)

export class PoliciesService {
  constructor(private readonly store: Store) {}

  /** Creates a policy and its first revision in one transaction. */
  async create(workspaceId: string, applicationId: string, input: PolicyCreate): Promise<Versioned<Policy>> {
    const rules = input.rules.map(normalizeRule)
    const definition = input.definition ?? null
    const errors = checkRules(rules, definition)
    if (errors.length > 0) throw invalid(errors)

    const now = nowSeconds()
    const content = {
      rules: toJson(rules),
      target: toJson(input.target),
      definition,
      override_response: input.override_response ?? null,
    }
    try {
      const row = await this.store.db.transaction().execute(async (trx) => {
        if (!(await applicationExists(trx, workspaceId, applicationId)))
          throw applicationNotFound(applicationId)
        const policy = await insertPolicy(trx, {
          workspace_id: workspaceId,
          application_id: applicationId,
          id: input.id,
          ...content,
          revision: 1,
          etag: newEtag(),
          created: now,
          updated: now,
        })
        await insertPolicyRevision(trx, {
          workspace_id: workspaceId,
          application_id: applicationId,
          policy_id: input.id,
          revision: 1,
          ...content,
          created: now,
        })
        return policy
      })
      return toPolicy(row)
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw conflict(`A policy with id "${input.id}" already exists in application "${applicationId}"`)
      }
      // The application was deleted between the check and the insert.
      if (isForeignKeyViolation(error)) throw applicationNotFound(applicationId)
      throw error
    }
  }
}

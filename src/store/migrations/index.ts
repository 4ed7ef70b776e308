import type { Migration } from 'kysely'
import { initial } from './0001_initial.js'
import { idempotencyKeys } from './0002_idempotency_keys.js'
import { documents } from './0003_documents.js'
import { pastRevisionsOnly } from './0004_past_revisions_only.js'
import { storeMetadata } from './0005_store_metadata.js'
import { policyModes } from './0006_policy_modes.js'
import { evaluationLog } from './0007_evaluation_log.js'
import { policyTests } from './0008_policy_tests.js'
import { evaluationSource } from './0009_evaluation_source.js'
import type { MigrationDialect } from './dialect.js'

/**
 * Every migration, by name, in order. Each lives in its own file, typed against `Kysely<any>`
 * and importing nothing of today's code, so that it builds the same database in a year as now.
 */
export function allMigrations(dialect: MigrationDialect): Record<string, Migration> {
  return {
    '0001_initial': initial(dialect),
    '0002_idempotency_keys': idempotencyKeys(dialect),
    '0003_documents': documents(),
    '0004_past_revisions_only': pastRevisionsOnly(),
    '0005_store_metadata': storeMetadata(),
    '0006_policy_modes': policyModes(),
    '0007_evaluation_log': evaluationLog(dialect),
    '0008_policy_tests': policyTests(dialect),
    '0009_evaluation_source': evaluationSource(dialect),
  }
}

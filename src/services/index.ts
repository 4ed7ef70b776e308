import type { Store } from '../store/database.js'
import { ApplicationsService } from './applications.service.js'
import { IdempotencyService } from './idempotency.service.js'
import { KeysService } from './keys.service.js'
import { PoliciesService } from './policies.service.js'

export interface Services {
  applications: ApplicationsService
  policies: PoliciesService
  keys: KeysService
  idempotency: IdempotencyService
}

export function createServices(store: Store): Services {
  return {
    applications: new ApplicationsService(store),
    policies: new PoliciesService(store),
    keys: new KeysService(store),
    idempotency: new IdempotencyService(store),
  }
}

import { randomUUID } from 'node:crypto'
import { invalid, notFound } from '../../errors.js'

/**
 * Helpers every resource's service uses.
 */

/** 122 random bits. Node keeps a buffer of entropy for UUIDs; `randomBytes` would take it from the kernel each time. */
export const newEtag = (): string => randomUUID().replaceAll('-', '')

/** An `id` in a PATCH body may only repeat the id in the path. */
export function assertSameId(bodyId: string | undefined, pathId: string): void {
  if (bodyId !== undefined && bodyId !== pathId) {
    throw invalid([
      { pointer: '/id', detail: `cannot be changed: it must equal the id in the path ("${pathId}")` },
    ])
  }
}

export const applicationNotFound = (id: string) => notFound(`No application "${id}" in this workspace`)

export const policyNotFound = (applicationId: string, id: string) =>
  notFound(`No policy "${id}" in application "${applicationId}"`)

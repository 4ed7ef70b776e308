import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Classifier, parseModel } from '../rules/detectors/classifier/linear.js'
import type { Classifiers } from '../rules/evaluate.js'

/**
 * The classifiers that ship with Warden, read from `models/` at the package root (beside `dist/`
 * and `src/`) the first time one is asked for, each file's checksum checked. The server reads
 * them all at start-up (`shippedClassifiers`), so a damaged file stops it before it listens
 * instead of failing a rule later; they are read once and never change while the process runs.
 * Evaluation (src/rules/) is handed them: it reads no file itself.
 */
export const SHIPPED_TASKS = ['prompt_injection', 'toxicity'] as const
export type ShippedTask = (typeof SHIPPED_TASKS)[number]

let directory: string | null = null
const loaded = new Map<ShippedTask, Classifier>()

/** The package's `models/` folder: the nearest one above this module (src/… or dist/…). */
export function modelsDirectory(): string {
  if (directory !== null) return directory
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (existsSync(join(dir, 'models', 'prompt_injection.wdm'))) {
      directory = join(dir, 'models')
      return directory
    }
    const parent = dirname(dir)
    if (parent === dir) throw new Error('the models/ folder that ships with Warden was not found')
    dir = parent
  }
}

/** The shipped classifier of a task, loaded and verified on first use. */
export function shippedClassifier(task: ShippedTask): Classifier {
  let classifier = loaded.get(task)
  if (classifier === undefined) {
    const path = join(modelsDirectory(), `${task}.wdm`)
    try {
      classifier = new Classifier(parseModel(readFileSync(path)))
    } catch (error) {
      throw new Error(`cannot load the ${task} model (${path}): ${(error as Error).message}`)
    }
    if (classifier.task !== task) throw new Error(`${path} holds a ${classifier.task} model, not ${task}`)
    loaded.set(task, classifier)
  }
  return classifier
}

/** Every shipped model, loaded and verified (at start-up): what policies are compiled with. */
export function shippedClassifiers(): Classifiers {
  return { prompt_injection: shippedClassifier('prompt_injection'), toxicity: shippedClassifier('toxicity') }
}

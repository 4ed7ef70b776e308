import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Band } from '../rules/band.js'
import type { SecondStage } from '../rules/evaluate.js'
import { modelsDirectory, type ShippedTask } from './shipped.js'

/**
 * The neural second stage of the offline classifiers (models/<task>.onnx, its card
 * models/<task>.onnx.json): a byte-level convolutional network read with onnxruntime-node on
 * the CPU, asked only where the linear model is unsure (its score inside `band`) and for every
 * `context` document and tool result the linear model is not sure is an attack
 * (docs/detectors.md, "The second stage"). The ONNX file's SHA-256 is checked against its card
 * when it is loaded; a mismatch stops start-up as a damaged `.wdm` does.
 *
 * One session per thread that evaluates (the main thread and each worker of the evaluation
 * pool), loaded once. onnxruntime-node runs a session on the calling thread, one operator
 * thread: what it costs is in the cost model (src/evaluation/cost.ts) like any rule's work.
 */

/** The band of linear scores inside which the second stage decides. */
export const SECOND_STAGE_BAND: Band = { low: 0.1, high: 0.9 }

interface Card {
  task: string
  window: number
  stride: number
  sha256: string
}

/** What onnxruntime-node's session is used for here. */
interface Session {
  run(feeds: Record<string, unknown>): Promise<Record<string, { data: ArrayLike<number> }>>
}

interface Runtime {
  Tensor: new (type: 'int64', data: BigInt64Array, dims: number[]) => unknown
  InferenceSession: {
    create(bytes: Uint8Array, options: Record<string, unknown>): Promise<Session>
  }
}

/** One task's network. */
export class ByteNetwork {
  constructor(
    readonly task: string,
    private readonly session: Session,
    private readonly runtime: Runtime,
    readonly window: number,
    readonly stride: number,
  ) {}

  /** The windows a text's UTF-8 bytes are read in: `window` bytes every `stride`, the last ending the text. */
  windows(bytes: Uint8Array): Uint8Array[] {
    if (bytes.length <= this.window) return [bytes]
    const out: Uint8Array[] = []
    for (let start = 0; start < bytes.length - this.window; start += this.stride)
      out.push(bytes.subarray(start, start + this.window))
    out.push(bytes.subarray(bytes.length - this.window))
    return out
  }

  /** The probability the network gives a text: its worst window's. */
  async score(text: string): Promise<number> {
    const bytes = Buffer.from(text, 'utf8')
    if (bytes.length === 0) return 0
    let worst = 0
    for (const window of this.windows(bytes)) {
      const ids = new BigInt64Array(window.length)
      for (let i = 0; i < window.length; i++) ids[i] = BigInt((window[i] as number) + 1)
      const output = await this.session.run({ bytes: new this.runtime.Tensor('int64', ids, [1, ids.length]) })
      const p = Number(output.score?.data[0])
      if (p > worst) worst = p
    }
    return worst
  }
}

/** Reads and verifies a task's network, or null when none ships for it. */
export async function loadNetwork(
  task: ShippedTask,
  directory = modelsDirectory(),
): Promise<ByteNetwork | null> {
  const path = join(directory, `${task}.onnx`)
  if (!existsSync(path)) return null
  try {
    const card = JSON.parse(readFileSync(`${path}.json`, 'utf8')) as Card
    const bytes = readFileSync(path)
    const digest = createHash('sha256').update(bytes).digest('hex')
    if (digest !== card.sha256) throw new Error('checksum mismatch: the file is damaged or was changed')
    if (card.task !== task) throw new Error(`it holds a ${card.task} network, not ${task}`)
    const runtime = (await import('onnxruntime-node')) as unknown as Runtime
    const session = await runtime.InferenceSession.create(bytes, {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    })
    return new ByteNetwork(task, session, runtime, card.window, card.stride)
  } catch (error) {
    throw new Error(`cannot load the ${task} second stage (${path}): ${(error as Error).message}`)
  }
}

let loaded: Promise<SecondStage | null> | null = null

/**
 * The second stages that ship with Warden, loaded once per thread (the main thread at start-up,
 * each evaluation worker when it starts); null when none ships.
 */
export function shippedSecondStage(): Promise<SecondStage | null> {
  loaded ??= (async () => {
    const network = await loadNetwork('prompt_injection')
    if (network === null) return null
    return secondStageOf(new Map([['prompt_injection', network]]))
  })()
  return loaded
}

/** Networks as evaluation asks them. */
export function secondStageOf(networks: ReadonlyMap<string, ByteNetwork>): SecondStage {
  const bands = new Map<string, Band>()
  for (const task of networks.keys()) bands.set(task, SECOND_STAGE_BAND)
  return {
    bands,
    async score(task, text) {
      const network = networks.get(task)
      if (network === undefined) throw new Error(`no second stage for ${task}`)
      return network.score(text)
    },
  }
}

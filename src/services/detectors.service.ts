import type { Guards } from '../evaluation/guard-scorer.js'
import { formatOptions } from '../guards/config.js'
import { FORMATS } from '../guards/formats/index.js'
import { RULE_TYPE_MODULES } from '../rules/rule-types/registry.js'
import type { DetectorList } from '../schemas/detectors.js'

/** The detector a toxicity or prompt_injection rule without `detector` uses (docs/guards.md). */
export function defaultDetector(judge: boolean): 'judge' | 'model' {
  return judge ? 'judge' : 'model'
}

/** What may score rules in a workspace: the offline model, the judge, the guards granted to it. */
export class DetectorsService {
  constructor(private readonly deps: { judge: boolean; guards: Guards | null }) {}

  async list(workspaceId: string): Promise<DetectorList> {
    const { judge, guards } = this.deps
    const modules = Object.values(RULE_TYPE_MODULES)
    const data: DetectorList['data'] = [
      {
        name: 'model',
        kind: 'model',
        configured: true,
        format: null,
        rule_types: modules.filter((m) => m.detectorChoice).map((m) => m.type),
        cascade: null,
      },
      {
        name: 'judge',
        kind: 'judge',
        configured: judge,
        format: null,
        rule_types: modules.filter((m) => m.detectorChoice).map((m) => m.type),
        cascade: null,
      },
    ]
    if (guards) {
      await guards.prepare(workspaceId)
      for (const config of guards.directory.all) {
        if (!guards.granted(config.name, workspaceId)) continue
        const abilities = FORMATS[config.format].abilities(formatOptions(config))
        data.push({
          name: config.name,
          kind: 'guard',
          configured: true,
          format: config.format,
          rule_types: modules
            .filter((m) => m.guardServes?.(abilities, { flagged: null }) === null)
            .map((m) => m.type),
          cascade: config.cascade ? { low: config.cascade.low, high: config.cascade.high } : null,
        })
      }
    }
    return { default: defaultDetector(judge), data }
  }
}

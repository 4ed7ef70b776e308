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
      return 1
    case 'warden-templates':
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
      return 1
    case 'stormfront':
    case 'toxigen':
      return 0
    default:
      return null
  }
}

export const TASKS = {
  prompt_injection: {
    features: { bits: 18, decode: true },
    heads: [{ name: 'injection', label: (row) => row.label }],
    training: { epochs: 8, rate: 0.3, l2: 1e-6 },
    calibrationFolds: 5,
    // Calibrated for traffic where one text in five is an attack: 0.5 then flags about 3% of
    // benign prompts on the development set, where the balanced prior flagged 9%.
    negativeWeight: 4,
  },
  toxicity: {
    features: { bits: 18, decode: false },
    heads: [
      { name: 'toxic', label: (row) => row.label },
      { name: 'hate', label: hate },
      { name: 'harassment', label: harassment },
    ],
    training: { epochs: 8, rate: 0.3, l2: 1e-6 },
    calibrationFolds: 5,
    // Calibrated for traffic where two texts in five are toxic: 0.5 then flags about 4% of
    // non-toxic texts on the development set, where the balanced prior flagged 9%.
    negativeWeight: 1.5,
  },
}

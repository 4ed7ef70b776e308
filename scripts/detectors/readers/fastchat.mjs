// lm-sys/FastChat's MT-Bench and Vicuna-Bench questions: benign prompts kept out of training.

/** Every turn of every question -> 0, category = the question's category. */
export function readBenchQuestions({ entry, files }) {
  const rows = []
  for (const path of entry.paths) {
    for (const [i, line] of files.text(path).split('\n').entries()) {
      if (!line.trim()) continue
      const q = JSON.parse(line)
      for (const [t, turn] of q.turns.entries()) {
        rows.push({
          label: 0,
          category: q.category,
          text: turn,
          lang: 'en',
          path,
          row: `${i}:${t}`,
          kind: 'prompt',
        })
      }
    }
  }
  return rows
}

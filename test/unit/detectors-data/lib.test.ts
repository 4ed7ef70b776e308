import { describe, expect, it } from 'vitest'
import { auc, fitLogistic, fitPlatt, recallAt } from '../../../scripts/detectors/lib.mjs'

describe('the detector scripts’ measures', () => {
  it('ROC-AUC: 1 when attacks outscore every benign text, 0 when inverted, ties count half', () => {
    expect(auc([0.9, 0.8, 0.2, 0.1], [1, 1, 0, 0])).toBe(1)
    expect(auc([0.1, 0.2, 0.8, 0.9], [1, 1, 0, 0])).toBe(0)
    expect(auc([0.5, 0.5, 0.5, 0.5], [1, 1, 0, 0])).toBe(0.5)
    // one attack above both benign texts, one between them: (2 + 1) / 4
    expect(auc([0.9, 0.5, 0.7, 0.1], [1, 1, 0, 0])).toBe(0.75)
    expect(auc([0.9, 0.8], [1, 1])).toBeNull()
  })

  it('recall at a share of benign flagged: the attacks above the benign score at that rank', () => {
    const benign = Array.from({ length: 100 }, (_, i) => i / 100) // 0.00 … 0.99
    const attacks = [0.995, 0.985, 0.975, 0.955, 0.5]
    const scores = [...attacks, ...benign]
    const labels = [...attacks.map(() => 1), ...benign.map(() => 0)]
    // 1% of 100 benign: the threshold is the second highest benign score, 0.98
    expect(recallAt(scores, labels, benign, 0.01)).toBeCloseTo(2 / 5, 12)
    // 5%: the sixth highest, 0.94
    expect(recallAt(scores, labels, benign, 0.05)).toBeCloseTo(4 / 5, 12)
    // an attack tied with the threshold is not caught
    expect(recallAt([0.98, ...benign], [1, ...benign.map(() => 0)], benign, 0.01)).toBe(0)
    expect(
      recallAt(
        benign,
        benign.map(() => 0),
        benign,
        0.01,
      ),
    ).toBeNull()
  })

  it('logistic regression recovers the weights that generated the labels', () => {
    // Deterministic pseudo-random points, labels drawn from σ(2x − y + 0.5).
    let seed = 7
    const rand = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
      return seed / 2 ** 32
    }
    const features: number[][] = []
    const labels: number[] = []
    for (let i = 0; i < 20000; i++) {
      const x = rand() * 4 - 2
      const y = rand() * 4 - 2
      features.push([x, y, 1])
      labels.push(rand() < 1 / (1 + Math.exp(-(2 * x - y + 0.5))) ? 1 : 0)
    }
    const w = fitLogistic(
      features,
      labels,
      labels.map(() => 1),
      1e-6,
    )
    expect(w[0]).toBeCloseTo(2, 1)
    expect(w[1]).toBeCloseTo(-1, 1)
    expect(w[2]).toBeCloseTo(0.5, 1)
  })

  it('logistic regression stays finite when the classes separate, held by the penalty', () => {
    const features = [
      [-2, 1],
      [-1, 1],
      [1, 1],
      [2, 1],
    ]
    const w = fitLogistic(features, [0, 0, 1, 1], [1, 1, 1, 1], 1)
    expect(Number.isFinite(w[0])).toBe(true)
    expect(w[0]).toBeGreaterThan(0)
    expect(Math.abs(w[1] as number)).toBeLessThan(1e-6)
  })

  it('Platt scaling: an increasing fit that stays finite on separated logits, its targets smoothed', () => {
    const logits = [-3, -2, -1, 1, 2, 3]
    const labels = [0, 0, 0, 1, 1, 1]
    const { a, b } = fitPlatt(
      logits,
      labels,
      logits.map(() => 1),
    )
    expect(a).toBeGreaterThan(0)
    expect(Number.isFinite(a) && Number.isFinite(b)).toBe(true)
    // Targets 4/5 and 1/5 (three of each class): the top logit's probability stays under 1.
    const top = 1 / (1 + Math.exp(-(a * 3 + b)))
    expect(top).toBeGreaterThan(0.7)
    expect(top).toBeLessThan(0.99)
    expect(b).toBeCloseTo(0, 6)
  })
})

import type { Classifiers } from '../rules/evaluate.js'

/** Each workspace's view of a set of classifiers, made once. */
const views = new WeakMap<Classifiers, Map<string, Classifiers>>()

/**
 * The offline classifiers as one workspace uses them: the same models, each seen through an
 * object of the workspace's own, so that the scores the scorers remember for the texts seen last
 * (kept per classifier object, src/rules/detectors/classifier/scorers.ts) are the workspace's
 * own. A shared memory would answer a text another tenant had sent faster, which tells a tenant
 * what another's texts said. Workspaces are the operator's to create, so their number bounds
 * how many views there are.
 */
export function classifiersFor(base: Classifiers, workspace: string): Classifiers {
  let byWorkspace = views.get(base)
  if (!byWorkspace) {
    byWorkspace = new Map()
    views.set(base, byWorkspace)
  }
  let view = byWorkspace.get(workspace)
  if (!view) {
    view = {
      prompt_injection: Object.create(base.prompt_injection) as Classifiers['prompt_injection'],
      toxicity: Object.create(base.toxicity) as Classifiers['toxicity'],
    }
    byWorkspace.set(workspace, view)
  }
  return view
}

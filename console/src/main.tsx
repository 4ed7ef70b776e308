import './styles.css'
import { type ComponentChildren, Fragment, render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { forgetKey, setUnauthenticatedHandler, storedKey } from './api'
import { PageTitle } from './components'
import { ApiKeysPage } from './pages/api-keys'
import { ApplicationPage } from './pages/application'
import { ApplicationsPage } from './pages/applications'
import { EvaluationDetailPage, EvaluationLogPage } from './pages/evaluations'
import { PlaygroundPage } from './pages/playground'
import { PolicyEditorPage } from './pages/policy-editor'
import { RevisionsPage } from './pages/revisions'
import { SignInPage } from './pages/sign-in'
import { TestsPage } from './pages/tests'
import { Link, match, navigate, useLocation } from './router'

type Page = { title: string; app?: string; node: ComponentChildren }

/** Every page: its path pattern and what it shows for the matched parameters. */
const ROUTES: [string, (p: Record<string, string>, query: URLSearchParams) => Page][] = [
  ['/applications', () => ({ title: 'Applications', node: <ApplicationsPage /> })],
  ['/api-keys', () => ({ title: 'API keys', node: <ApiKeysPage /> })],
  [
    '/applications/:app',
    (p) => ({ title: p.app ?? '', app: p.app, node: <ApplicationPage appId={p.app ?? ''} /> }),
  ],
  [
    '/applications/:app/policies/new',
    (p) => ({
      title: 'New policy',
      app: p.app,
      node: <PolicyEditorPage appId={p.app ?? ''} policyId={null} />,
    }),
  ],
  [
    '/applications/:app/policies/:policy',
    (p) => ({
      title: `Policy ${p.policy}`,
      app: p.app,
      node: <PolicyEditorPage appId={p.app ?? ''} policyId={p.policy ?? ''} />,
    }),
  ],
  [
    '/applications/:app/policies/:policy/revisions',
    (p) => ({
      title: `Revisions of ${p.policy}`,
      app: p.app,
      node: <RevisionsPage appId={p.app ?? ''} policyId={p.policy ?? ''} />,
    }),
  ],
  [
    '/applications/:app/policies/:policy/tests',
    (p) => ({
      title: `Tests of ${p.policy}`,
      app: p.app,
      node: <TestsPage appId={p.app ?? ''} policyId={p.policy ?? ''} />,
    }),
  ],
  [
    '/applications/:app/playground',
    (p, query) => ({
      title: 'Playground',
      app: p.app,
      node: <PlaygroundPage appId={p.app ?? ''} preselect={query.get('policy')} />,
    }),
  ],
  [
    '/applications/:app/evaluations',
    (p) => ({ title: 'Evaluation log', app: p.app, node: <EvaluationLogPage appId={p.app ?? ''} /> }),
  ],
  [
    '/applications/:app/evaluations/:evaluation',
    (p) => ({
      title: 'Evaluation',
      app: p.app,
      node: <EvaluationDetailPage appId={p.app ?? ''} evaluationId={p.evaluation ?? ''} />,
    }),
  ],
]

function route(path: string, query: URLSearchParams): Page | null {
  for (const [pattern, page] of ROUTES) {
    const params = match(pattern, path)
    if (params) return page(params, query)
  }
  return null
}

function App() {
  const location = useLocation()
  const [signedIn, setSignedIn] = useState(() => storedKey() !== null)
  const [signOutReason, setSignOutReason] = useState<string | null>(null)

  useEffect(() => {
    setUnauthenticatedHandler((message) => {
      forgetKey()
      setSignedIn(false)
      setSignOutReason(`You were signed out: ${message}`)
      navigate('/sign-in', { replace: true })
    })
  }, [])

  const onSignInPage = location.path === '/sign-in'
  useEffect(() => {
    if (!signedIn && !onSignInPage) navigate('/sign-in', { replace: true })
    else if (signedIn && (onSignInPage || location.path === '/')) navigate('/applications', { replace: true })
  }, [signedIn, onSignInPage, location.path])

  const page = signedIn && !onSignInPage ? route(location.path, location.query) : null
  const title = onSignInPage ? 'Sign in' : (page?.title ?? 'Not found')

  useEffect(() => {
    document.title = `${title} · Warden console`
  }, [title])

  const signOut = () => {
    forgetKey()
    setSignedIn(false)
    setSignOutReason('You signed out. The key was removed from this tab.')
    navigate('/sign-in')
  }

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top">
        <div class="brand">
          <svg viewBox="0 0 32 32" width="24" height="24" aria-hidden="true">
            <path d="M16 2 4 7v8c0 7.5 5.1 13.4 12 15 6.9-1.6 12-7.5 12-15V7z" fill="currentColor" />
          </svg>
          <span>Warden</span>
        </div>
        {signedIn && !onSignInPage && (
          <nav aria-label="Main">
            <ul>
              <li>
                <Link
                  to="/applications"
                  aria-current={location.path === '/applications' ? 'page' : undefined}
                >
                  Applications
                </Link>
              </li>
              {page?.app && <AppNav appId={page.app} path={location.path} />}
              <li>
                <Link to="/api-keys" aria-current={location.path === '/api-keys' ? 'page' : undefined}>
                  API keys
                </Link>
              </li>
            </ul>
          </nav>
        )}
        {signedIn && !onSignInPage && (
          <button type="button" class="sign-out" onClick={signOut}>
            Sign out
          </button>
        )}
      </header>
      <main id="main">
        {onSignInPage || !signedIn ? (
          <SignInPage
            reason={signOutReason}
            onSignedIn={() => {
              setSignOutReason(null)
              setSignedIn(true)
              navigate('/applications', { replace: true })
            }}
          />
        ) : page ? (
          // Keyed by path: a new page starts with fresh state even when it reuses a component.
          <Fragment key={location.path}>{page.node}</Fragment>
        ) : (
          <>
            <PageTitle>Page not found</PageTitle>
            <p>
              There is no console page at this address. <Link to="/applications">Go to the applications</Link>
              .
            </p>
          </>
        )}
      </main>
    </>
  )
}

function AppNav({ appId, path }: { appId: string; path: string }) {
  const base = `/applications/${encodeURIComponent(appId)}`
  const here = (to: string) => (path === to ? 'page' : undefined)
  return (
    <>
      <li>
        <Link to={base} aria-current={here(base)}>
          Policies
        </Link>
      </li>
      <li>
        <Link to={`${base}/playground`} aria-current={here(`${base}/playground`)}>
          Playground
        </Link>
      </li>
      <li>
        <Link to={`${base}/evaluations`} aria-current={here(`${base}/evaluations`)}>
          Evaluation log
        </Link>
      </li>
    </>
  )
}

const root = document.getElementById('app')
if (root) render(<App />, root)

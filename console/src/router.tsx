// A small history router: the console's pages are paths under /console, so every page can be
// bookmarked and reloaded (the server answers any /console path with index.html).
import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'

export const BASE = '/console'

export interface Location {
  /** The path inside the console, starting with "/". */
  path: string
  query: URLSearchParams
}

function current(): Location {
  const raw = window.location.pathname
  let path = raw.startsWith(BASE) ? raw.slice(BASE.length) : raw
  if (!path.startsWith('/')) path = `/${path}`
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1)
  return { path, query: new URLSearchParams(window.location.search) }
}

const listeners = new Set<() => void>()
let navigated = false

/** True once the console changed page itself (not a page load): headings take focus only then. */
export function hasNavigated(): boolean {
  return navigated
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  navigated = true
  const url = `${BASE}${to}`
  if (options.replace) window.history.replaceState(null, '', url)
  else window.history.pushState(null, '', url)
  for (const listener of listeners) listener()
}

export function useLocation(): Location {
  const [location, setLocation] = useState(current)
  useEffect(() => {
    const update = () => setLocation(current())
    const back = () => {
      navigated = true
      update()
    }
    listeners.add(update)
    window.addEventListener('popstate', back)
    return () => {
      listeners.delete(update)
      window.removeEventListener('popstate', back)
    }
  }, [])
  return location
}

/** Matches `/applications/:app/policies/:policy` against a path; the params, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/')
  const got = path.split('/')
  if (want.length !== got.length) return null
  const params: Record<string, string> = {}
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string
    const g = got[i] as string
    if (w.startsWith(':')) {
      if (!g) return null
      try {
        params[w.slice(1)] = decodeURIComponent(g)
      } catch {
        return null
      }
    } else if (w !== g) return null
  }
  return params
}

interface LinkProps {
  to: string
  children: ComponentChildren
  class?: string
  'aria-current'?: 'page' | undefined
  'aria-label'?: string
}

/** A real link (middle-click and copy work) that changes page without reloading. */
export function Link({ to, children, ...rest }: LinkProps) {
  return (
    <a
      {...rest}
      href={`${BASE}${to}`}
      onClick={(event) => {
        if (event.defaultPrevented || event.button !== 0) return
        if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
        event.preventDefault()
        navigate(to)
      }}
    >
      {children}
    </a>
  )
}

export function seg(value: string): string {
  return encodeURIComponent(value)
}

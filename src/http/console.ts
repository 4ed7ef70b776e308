import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { AppError } from '../errors.js'

/**
 * What a console page may load: its own scripts, styles and images, and requests to this
 * server's API. No inline script or style, no other origin, and no framing (clickjacking).
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

export interface ConsoleOptions {
  /** The directory `vite build` writes: index.html, favicon.svg and assets/. */
  root: URL
}

/** Content-hashed file names: a file's content never changes under its name. */
const IMMUTABLE = 'public, max-age=31536000, immutable'

/**
 * The web console at /console: built static files, served without authentication (the page
 * itself holds no data; every call it makes to /v1 carries the signed-in key) and left out of
 * the OpenAPI document. Any path that is not a file (a deep link such as
 * /console/applications/support-bot) answers index.html, so pages can be bookmarked; a missing
 * file under /console/assets/ is a 404.
 */
export const consoleRoutes: FastifyPluginAsync<ConsoleOptions> = async (app, { root }) => {
  const dir = fileURLToPath(root)
  const built = existsSync(`${dir}/index.html`)

  app.addHook('onRequest', async (_request, reply) => {
    reply.header('content-security-policy', CONSOLE_CSP)
    reply.header('referrer-policy', 'no-referrer')
    reply.header('cross-origin-opener-policy', 'same-origin')
    reply.header('x-frame-options', 'DENY')
  })

  // Only reply.sendFile: the routes below decide which paths are files.
  await app.register(fastifyStatic, { root: dir, serve: false, index: false, dotfiles: 'deny' })

  const page = (reply: FastifyReply) => {
    if (!built) {
      throw new AppError('not_found', 'The console is not built on this server; run npm run build')
    }
    // Always revalidated, so a new build's asset names are picked up at once.
    reply.header('cache-control', 'no-cache')
    return reply.sendFile('index.html', { cacheControl: false })
  }

  app.get('/console', { schema: { hide: true } }, async (_request, reply) => page(reply))
  app.get<{ Params: { '*': string } }>('/console/*', { schema: { hide: true } }, async (request, reply) => {
    const file = request.params['*']
    if (file.startsWith('assets/')) {
      // @fastify/send refuses paths that leave the directory; a missing file is a plain 404
      // (and must not be cached for a year).
      if (!/^assets\/[\w.-]+$/.test(file) || !existsSync(`${dir}/${file}`)) {
        throw new AppError('not_found', `No console file ${file}`)
      }
      reply.header('cache-control', IMMUTABLE)
      return reply.sendFile(file, { cacheControl: false })
    }
    // A top-level file of the build (favicon.svg); anything else is a page of the app.
    if (/^[\w-]+\.(?:svg|png|ico|txt)$/.test(file) && existsSync(`${dir}/${file}`)) {
      reply.header('cache-control', 'public, max-age=3600')
      return reply.sendFile(file, { cacheControl: false })
    }
    return page(reply)
  })
}

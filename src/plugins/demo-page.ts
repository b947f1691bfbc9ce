// Demo mode's live leaderboard page at `/` (src/demo/live-page.html: one static file, no build
// step), with what it imports: the typed client as compiled beside this file (dist/client, which
// has no dependencies). Registered by server.ts only when it runs the demo (no REDIS_URL). The
// page's own Content-Security-Policy allows its inline script and style by their hashes, and
// connections to this origin only.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const JS = 'text/javascript; charset=utf-8'

/** The .js files of a folder, by name (read once: the folder is part of the installed package). */
function scripts (dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>()
  let names: string[] = []
  try { names = readdirSync(dir) } catch {}
  for (const name of names) if (/^[a-z-]+\.js$/.test(name)) files.set(name, readFileSync(`${dir}/${name}`))
  return files
}

/** The page's CSP: each inline <script> and <style> allowed by its SHA-256, nothing else inline. */
export function pagePolicy (html: string): string {
  const hashes = (tag: string): string => [...html.matchAll(new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, 'g'))]
    .map((match) => `'sha256-${createHash('sha256').update(match[1] ?? '').digest('base64')}'`).join(' ')
  return `default-src 'none'; script-src 'self' ${hashes('script')}; style-src ${hashes('style')}; connect-src 'self'; ` +
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

export default fp(async function demoPagePlugin (fastify: FastifyInstance) {
  const here = dirname(fileURLToPath(import.meta.url))
  const html = readFileSync(`${here}/../demo/live-page.html`, 'utf8')
  const policy = pagePolicy(html)
  const client = scripts(`${here}/../client`)

  fastify.get('/', { schema: { hide: true }, config: { access: { kind: 'service' } } }, async (_request, reply) =>
    await reply.header('content-security-policy', policy).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(html))

  fastify.get('/demo/client/:file', { schema: { hide: true }, config: { access: { kind: 'service' } } }, async (request, reply) => {
    const body = client.get((request.params as { file: string }).file)
    if (body === undefined) return await reply.callNotFound()
    return await reply.header('cache-control', 'no-cache').type(JS).send(body)
  })
}, { name: 'demo-page' })

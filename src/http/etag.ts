// Entity tags for the read endpoints. A tag is made of the server's data version (bumped by
// every write), the response format (this release and its Redis schema) and, for bodies that
// depend on the UTC day, the day: so it changes whenever the body could, is the same on every
// instance, and can be checked against the data version alone, without reading the data.
// A compressed body's tag carries its encoding (`-br`, `-gzip`), as a strong tag must; a
// client's tag matches whatever encoding it was sent in.
import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import type { FastifyReply } from 'fastify'
import { utcDay } from '../periods/periods.js'
import { packageInfo } from '../package-info.js'
import { SCHEMA_VERSION } from '../redis/keys.js'

const FORMAT = createHash('sha256').update(`${packageInfo.version}:${SCHEMA_VERSION}`).digest('base64url').slice(0, 6)

export type ContentEncoding = 'br' | 'gzip' | 'identity'

/** The tag of a body read at `version` (and on the UTC day of `nowMs`, when it depends on it), unquoted. */
export function entityTag (version: string, nowMs?: number): string {
  return nowMs === undefined ? `${version}-${FORMAT}` : `${version}-${FORMAT}-${utcDay(nowMs)}`
}

/**
 * Keep the answer, but ask again before using it; it varies with the accepted encodings (added
 * to a Vary already set, such as CORS's `Origin`).
 */
export function cacheHeaders (reply: FastifyReply): FastifyReply {
  const vary = reply.getHeader('vary')
  return reply.header('cache-control', 'private, no-cache').header('vary', vary === undefined ? 'accept-encoding' : `${String(vary)}, accept-encoding`)
}

/** A 304 for a request whose If-None-Match holds `matched` (as `matchingTag` returned it). */
export function sendNotModified (reply: FastifyReply, matched: string): FastifyReply {
  cacheHeaders(reply).code(304).header('etag', matched)
  // Fastify's HEAD routes give an empty answer `content-length: 0`, which a 304 must not carry
  // (RFC 9110 8.6: only the 200's length, or none); an empty stream gets no length at all.
  return reply.request.method === 'HEAD' ? reply.send(Readable.from([])) : reply.send()
}

/** The ETag header value of a body with `tag`, sent in `encoding`. */
export function etagHeader (tag: string, encoding: ContentEncoding): string {
  return encoding === 'identity' ? `"${tag}"` : `"${tag}-${encoding}"`
}

/**
 * The entity tag in an If-None-Match header that matches `tag` by weak comparison (RFC 9110
 * 13.1.2: `W/` ignored), in any encoding, as it appears in the header; null when none does.
 */
export function matchingTag (ifNoneMatch: string | undefined, tag: string): string | null {
  if (ifNoneMatch === undefined) return null
  for (const raw of ifNoneMatch.split(',')) {
    const candidate = raw.trim()
    if (candidate === '*') return `"${tag}"`
    const opaque = candidate.startsWith('W/') ? candidate.slice(2) : candidate
    if (opaque.length < 2 || !opaque.startsWith('"') || !opaque.endsWith('"')) continue
    const value = opaque.slice(1, -1)
    if (value === tag || value === `${tag}-br` || value === `${tag}-gzip`) return opaque
  }
  return null
}

// The client address the failed-authentication limit counts by: always a parsed IP, never
// header text. IPv4 as dotted decimal; an IPv4-mapped IPv6 address as its IPv4; any other
// IPv6 reduced to its /64 (one subscriber usually holds a whole /64, so counting single
// addresses would let one client rotate through 2^64 of them).
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import type { FastifyRequest, FastifyServerOptions } from 'fastify'
import type { Config } from '../config.js'

/** A normalized client address: safe in a Redis key name (digits, a-f, `.`, `:`, `/`). */
export type ClientAddress = string & { readonly __brand: 'ClientAddress' }

const NORMALIZED = /^[0-9a-f.:/]{1,43}$/

/** The normalized form of an IP address, or null for anything that is not one. */
export function normalizeAddress (text: string | undefined): ClientAddress | null {
  // isIP is strict (no "127.1", no octal, no hex); it accepts an IPv6 zone id, dropped below.
  if (text === undefined || text.length > 64) return null
  const family = isIP(text)
  if (family === 4) return ipaddr.IPv4.parse(text).toString() as ClientAddress
  if (family !== 6) return null
  const ip = ipaddr.IPv6.parse(text)
  if (ip.isIPv4MappedAddress()) return ip.toIPv4Address().toString() as ClientAddress
  const [a = 0, b = 0, c = 0, d = 0] = ip.parts
  return `${new ipaddr.IPv6([a, b, c, d, 0, 0, 0, 0]).toString()}/64` as ClientAddress
}

/** Whether `text` is what normalizeAddress makes (a last guard before it names a key). */
export function isClientAddress (text: string): text is ClientAddress {
  return NORMALIZED.test(text)
}

/**
 * The address of the client behind `request`: Fastify's `request.ip` (from X-Forwarded-For
 * only as far as TRUST_PROXY trusts it) when it parses as an IP, else the socket's peer.
 */
export function clientAddress (request: FastifyRequest): ClientAddress {
  return normalizeAddress(request.ip) ??
    normalizeAddress(request.socket.remoteAddress) ??
    ('0.0.0.0' as ClientAddress) // no peer address at all (a closed socket): one shared bucket
}

/**
 * Fastify's trustProxy for TRUST_PROXY. Fastify 5.12 dropped hop counts (a number now trusts
 * nothing), so a count becomes the function it used to be: the `hops` nearest addresses of the
 * X-Forwarded-For chain are proxies, the next one is the client. Safe only when the service
 * cannot be reached but through those proxies (see docs/operating.md, "Client addresses").
 */
export function trustProxyOption (trustProxy: Config['trustProxy']): FastifyServerOptions['trustProxy'] {
  if (typeof trustProxy !== 'number') return trustProxy
  return (_address: string, hop: number) => hop < trustProxy
}

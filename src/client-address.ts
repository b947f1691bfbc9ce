// The client address the failed-authentication limit counts by: always a parsed IP, never
// header text. IPv4 as dotted decimal; an IPv4-mapped IPv6 address as its IPv4; any other
// IPv6 reduced to its /64 (one subscriber usually holds a whole /64, so counting single
// addresses would let one client rotate through 2^64 of them). A leaf: the key builder checks
// an address with it before it names a key, and the HTTP layer reads a request's with it.
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

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

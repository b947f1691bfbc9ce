// Verifies a webhook from the service as the Standard Webhooks specification says, with no
// dependency (the client's promise): WebCrypto's HMAC-SHA256, as browsers, Node 20+, Deno, Bun
// and edge workers have it. test/webhook-verifier.test.ts holds it to the `standardwebhooks`
// package, which signs the service's deliveries. The library's entry exports the same function
// built on that package (src/webhooks/verify.ts).
import type { WebhookEvent } from './webhook-events.js'

/** A webhook whose headers or signature do not check out: answer 400 and do not act on it. */
export class WebhookVerificationError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'WebhookVerificationError'
  }
}

/** A request's headers: fetch's Headers, or node:http's object (names in lower case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>

export interface VerifyWebhookOptions {
  /** How far the `webhook-timestamp` may be from now, in seconds (default 300, as the specification's libraries). */
  toleranceSeconds?: number
  /** Now (default: the clock). */
  now?: Date
}

const SECRET_PREFIX = 'whsec_'

function header (headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  const value = (headers as Record<string, string | string[] | undefined>)[name]
  return Array.isArray(value) ? value[0] : value
}

function base64Bytes (text: string): Uint8Array {
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

/**
 * The event in `body` (the request's raw body, as received: a parsed and re-serialized body
 * does not verify), when its `webhook-signature` is the HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`
 * under `secret` (`whsec_…`, as the webhook's creation showed it) and its timestamp is within the
 * tolerance; otherwise throws WebhookVerificationError. Drop a repeat by the event's `id`: a
 * delivery may come more than once.
 */
export async function verifyWebhook (secret: string, body: string | Uint8Array, headers: WebhookHeaders, options: VerifyWebhookOptions = {}): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id')
  const timestamp = header(headers, 'webhook-timestamp')
  const signatures = header(headers, 'webhook-signature')
  if (id === undefined || timestamp === undefined || signatures === undefined) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature header')
  const seconds = /^\d{1,15}$/.test(timestamp) ? Number(timestamp) : NaN
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000)
  const tolerance = options.toleranceSeconds ?? 300
  if (Number.isNaN(seconds)) throw new WebhookVerificationError('webhook-timestamp is not a number of seconds')
  if (seconds < now - tolerance) throw new WebhookVerificationError('webhook-timestamp is too old')
  if (seconds > now + tolerance) throw new WebhookVerificationError('webhook-timestamp is too new')

  let keyBytes: Uint8Array
  try {
    keyBytes = base64Bytes(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret)
  } catch {
    throw new WebhookVerificationError('the secret is not base64 (use the whsec_… value the webhook was created with)')
  }
  const encoder = new TextEncoder()
  const head = encoder.encode(`${id}.${timestamp}.`)
  const payload = typeof body === 'string' ? encoder.encode(body) : body
  const signed = new Uint8Array(head.length + payload.length)
  signed.set(head)
  signed.set(payload, head.length)
  const key = await crypto.subtle.importKey('raw', keyBytes as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',')
    if (version !== 'v1' || value === undefined) continue
    let signature: Uint8Array
    try {
      signature = base64Bytes(value)
    } catch {
      continue
    }
    // crypto.subtle.verify compares in constant time.
    if (await crypto.subtle.verify('HMAC', key, signature as Uint8Array<ArrayBuffer>, signed)) {
      return JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body)) as WebhookEvent
    }
  }
  throw new WebhookVerificationError('no matching signature')
}

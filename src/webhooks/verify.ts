// The library's webhook verifier: the `standardwebhooks` package's (the one that signs the
// service's deliveries), with the client's signature and error (src/client/webhook-verifier.ts,
// the same without a dependency), so code moves between the two unchanged.
import { Webhook } from 'standardwebhooks'
import { type VerifyWebhookOptions, type WebhookHeaders, WebhookVerificationError } from '../client/webhook-verifier.js'
import type { WebhookEvent } from '../client/webhook-events.js'

const NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const

/**
 * The event in `body` (the raw body, as received) when its Standard Webhooks signature checks
 * out under `secret`; otherwise throws WebhookVerificationError. The timestamp may be 5 minutes
 * off (the package's tolerance: `options` is the client's, and only its absence is taken here).
 */
export async function verifyWebhook (secret: string, body: string | Uint8Array, headers: WebhookHeaders, options?: VerifyWebhookOptions): Promise<WebhookEvent> {
  if (options?.now !== undefined || options?.toleranceSeconds !== undefined) {
    throw new TypeError('the library\'s verifyWebhook takes no options (standardwebhooks fixes them); use guild-leaderboard/client\'s for a tolerance or a clock of your own')
  }
  const plain: Record<string, string> = {}
  for (const name of NAMES) {
    const value = typeof (headers as Headers).get === 'function' ? (headers as Headers).get(name) : (headers as Record<string, string | string[] | undefined>)[name]
    const first = Array.isArray(value) ? value[0] : value
    if (typeof first === 'string') plain[name] = first
  }
  try {
    return new Webhook(secret).verify(typeof body === 'string' ? body : Buffer.from(body), plain) as WebhookEvent
  } catch (err) {
    throw new WebhookVerificationError((err as Error).message)
  }
}

// The webhook verifiers: the client's, hand-written on WebCrypto (no dependency), and the
// library's, on the standardwebhooks package, both held to what that package signs and refuses.
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { verifyWebhook as clientVerify, WebhookVerificationError } from '../src/client/index.js'
import { verifyWebhook as libraryVerify } from '../src/index.js'

const SECRET = 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')
const OTHER = 'whsec_' + Buffer.from('fedcba9876543210fedcba9876543210').toString('base64')
const body = JSON.stringify({ id: 'evt_1_2_0', type: 'ping', created_at: '2026-11-25T00:00:00.000Z', server_id: '1', data: { webhook_id: 'abc' } })

function signed (at = new Date(), secret = SECRET, id = 'evt_1_2_0', payload = body): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, at, payload) }
}

for (const [name, verify] of [['client', clientVerify], ['library', libraryVerify]] as const) {
  t.test(`${name}: a delivery signed by standardwebhooks verifies, from node:http's headers or fetch's Headers, as a string or bytes`, async (t) => {
    const headers = signed()
    t.same(await verify(SECRET, body, headers), JSON.parse(body))
    t.same(await verify(SECRET, new TextEncoder().encode(body), new Headers(headers)), JSON.parse(body))
    // A rotated secret: the header may carry several signatures, any one of which may match.
    const both = { ...headers, 'webhook-signature': `${signed(new Date(), OTHER)['webhook-signature']} ${headers['webhook-signature']}` }
    t.same(await verify(SECRET, body, both), JSON.parse(body))
  })

  t.test(`${name}: refused as standardwebhooks refuses: another body, another secret, another id, an old or future timestamp, no headers`, async (t) => {
    const headers = signed()
    const refuse = async (what: string, s: string, b: string, h: Record<string, string>) => {
      await t.rejects(verify(s, b, h), WebhookVerificationError, what)
      t.throws(() => new Webhook(s).verify(b, h), `${what}: standardwebhooks refuses it too`)
    }
    await refuse('body changed', SECRET, body.replace('abc', 'abd'), headers)
    await refuse('other secret', OTHER, body, headers)
    await refuse('other id', SECRET, body, { ...headers, 'webhook-id': 'evt_1_2_1' })
    await refuse('10 minutes old', SECRET, body, signed(new Date(Date.now() - 600_000)))
    await refuse('10 minutes ahead', SECRET, body, signed(new Date(Date.now() + 600_000)))
    await refuse('no signature header', SECRET, body, { 'webhook-id': headers['webhook-id']!, 'webhook-timestamp': headers['webhook-timestamp']! })
    await refuse('a v1a signature only', SECRET, body, { ...headers, 'webhook-signature': headers['webhook-signature']!.replace('v1,', 'v1a,') })
  })
}

t.test('client: the tolerance and the clock are options', async (t) => {
  const at = new Date('2026-11-25T12:00:00Z')
  const headers = signed(at)
  t.same(await clientVerify(SECRET, body, headers, { now: new Date(at.getTime() + 60_000) }), JSON.parse(body))
  await t.rejects(clientVerify(SECRET, body, headers, { now: new Date(at.getTime() + 60_000), toleranceSeconds: 30 }), { message: /too old/ })
})

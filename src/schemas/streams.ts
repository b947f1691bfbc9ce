// The live-update streams' responses: a `text/event-stream` whose events carry an endpoint's
// body (the schema named in the description), and the endpoint's errors.
import { Type } from 'typebox'
import type { NamedSchema } from './common.js'
import { responseHeaders } from './headers.js'

/** Last-Event-ID, as EventSource and the typed client send it on a reconnect; and the read headers. */
export const StreamRequestHeaders = Type.Object({
  'last-event-id': Type.Optional(Type.String({
    description: 'The `id:` of the last event received (the body\'s ETag): when it is still current, the stream opens without repeating it'
  })),
  'x-request-id': Type.Optional(Type.String({ description: 'Your id for this request, echoed back and logged when valid' }))
})

/** The 200 of a stream whose events carry the named `body` schema's JSON. */
export function streamResponse (event: string, body: NamedSchema) {
  return {
    description: `A \`text/event-stream\`: an event \`${event}\` at once (none when Last-Event-ID names the current body), ` +
      'then one whenever the body changes, at most one a second. Each event\'s `id:` is the body\'s ETag and its `data:` ' +
      `the \`${body.$id}\` the plain endpoint answers, on one line. A comment line (\`: keep-alive\`) at least every 15 s.`,
    headers: responseHeaders.counted,
    content: { 'text/event-stream': { schema: Type.String() } }
  }
}

// Response headers for a JSON API: browsers must not sniff a body into something else, render
// it in a frame, or send the URL on as a referrer. app.ts sets them, with the request id, in the
// first onRequest hook, so every response carries them (a route may replace one: the docs page
// sets its own CSP); client-errors.ts adds them to the raw 400 of a request Node cannot parse.
// Fastify sends no framework banner (no `x-powered-by`, no `server`); tests pin that it stays so.
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer'
}

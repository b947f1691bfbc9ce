// GET /api/v1/docs: the interactive reference is served with every asset it loads, from this
// instance (nothing from elsewhere), under a CSP that lets it run; no key, no rate limit.
import t from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'
import { DOCS_CSP } from '../src/plugins/docs-page.js'
import { SECURITY_HEADERS } from '../src/http/security-headers.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

// A failed-authentication limit of 1: a docs request that went through authentication would
// lock the address out (429) by its second try.
const { app } = await buildTestApp(t, server.url, { authFailureLimit: 1 })

/** The local URLs of the page's scripts, styles and icons. */
function assetsOf (html: string): string[] {
  return [...html.matchAll(/<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '')
}

t.test('the page is HTML that loads its scripts from files, all of them from this instance', async (t) => {
  for (const url of ['/api/v1/docs', '/api/v1/docs/']) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, 200, url)
    t.match(res.headers['content-type'], /^text\/html/)
    t.match(res.body, /<div id="swagger-ui">/)
    t.notMatch(res.body, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script (the CSP allows none)')
    t.notMatch(res.body, /(?:src|href)="(?:https?:)?\/\//, 'nothing from another host: it works offline')
  }
})

t.test('every asset the page loads is served, with its type', async (t) => {
  const html = (await app.inject({ url: '/api/v1/docs' })).body
  const assets = assetsOf(html)
  t.ok(assets.length >= 5, `${assets.length} assets`)
  const types: Record<string, RegExp> = { js: /^application\/javascript/, css: /^text\/css/, png: /^image\/png/ }
  for (const asset of assets) {
    t.match(asset, /^\/api\/v1\/docs\/static\//, asset)
    const res = await app.inject({ url: asset })
    t.equal(res.statusCode, 200, asset)
    t.match(res.headers['content-type'], types[asset.split('.').pop() ?? ''] ?? /^$/, `${asset}: its type`)
    t.ok(res.rawPayload.length > 0, `${asset}: not empty`)
  }
  const initializer = await app.inject({ url: '/api/v1/docs/static/swagger-initializer.js' })
  t.match(initializer.body, /resolveUrl\('\.\/json'\)/, 'the page loads the document from beside itself')
  t.equal((await app.inject({ url: '/api/v1/docs/json' })).body, (await app.inject({ url: '/api/v1/openapi.json' })).body, 'the same document')
})

t.test('assets are sent as they are, not compressed on every request, and revalidate with 304', async (t) => {
  const url = '/api/v1/docs/static/swagger-ui-bundle.js'
  const res = await app.inject({ url, headers: { 'accept-encoding': 'br, gzip' } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-encoding'], undefined, 'no CPU spent compressing 1.7 MB for a request with no key')
  t.ok(res.rawPayload.length > 1_000_000)
  const again = await app.inject({ url, headers: { 'accept-encoding': 'br, gzip', 'if-none-match': String(res.headers.etag) } })
  t.equal(again.statusCode, 304, 'a browser revalidates it instead')
  const document = await app.inject({ url: '/api/v1/openapi.json', headers: { 'accept-encoding': 'br' } })
  t.equal(document.headers['content-encoding'], 'br', 'the document itself is still compressed')
})

t.test("the page's CSP lets it run (its own scripts, inline styles, data: images) and nothing more", async (t) => {
  for (const url of ['/api/v1/docs', '/api/v1/docs/static/swagger-ui-bundle.js', '/api/v1/docs/json']) {
    const res = await app.inject({ url })
    t.equal(res.headers['content-security-policy'], DOCS_CSP, url)
    t.equal(res.headers['x-content-type-options'], SECURITY_HEADERS['x-content-type-options'])
    t.equal(res.headers['referrer-policy'], SECURITY_HEADERS['referrer-policy'])
  }
  const directives = new Map(DOCS_CSP.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]))
  t.same(directives.get('default-src'), ["'none'"])
  t.same(directives.get('script-src'), ["'self'"], 'scripts from this origin only')
  t.same(directives.get('connect-src'), ["'self'"], 'the document and "Try it out" from this origin only')
  t.same(directives.get('frame-ancestors'), ["'none'"])
  const api = await app.inject({ url: '/healthz' })
  t.equal(api.headers['content-security-policy'], SECURITY_HEADERS['content-security-policy'], 'the rest of the service keeps its own')
})

t.test('the page needs no key and is not rate limited', async (t) => {
  for (let i = 0; i < 5; i++) {
    for (const url of ['/api/v1/docs', '/api/v1/docs/static/swagger-initializer.js', '/api/v1/docs/json']) {
      const res = await app.inject({ url })
      t.equal(res.statusCode, 200, `${url}, try ${i + 1}`)
      t.equal(res.headers['x-ratelimit-limit'], undefined, 'not counted')
    }
  }
  const api = await app.inject({ url: '/api/v1/servers/1/stats' })
  t.equal(api.statusCode, 401, 'the API still wants a key, and the address was not locked out by the docs requests')
})

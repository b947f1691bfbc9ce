// A public board's page (/p/{slug}) and rank card in a real browser (Debian's Chromium, driven by
// puppeteer-core): with JavaScript off it renders the rows from the HTML alone; with it, a change
// made after the page loaded arrives without a reload, under the page's own Content-Security-
// Policy. Screenshots at 1280×800 and 390×844 are kept in .ci/artifacts/ (git-ignored, kept by
// .ci/run), and axe-core finds no serious or critical accessibility violation. Without a browser:
// names are escaped, embedding is allowed only with ?embed=1, a page of 100 rows stays under
// 30 KB compressed, and the card is SVG with the name as text.
import t, { type Test } from 'tap'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { createRequire } from 'node:module'
import puppeteer, { type Browser, type Page } from 'puppeteer-core'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'
import { ROOT } from './helpers/built.js'

const CHROMIUM = '/usr/bin/chromium'
const ARTIFACTS = join(ROOT, '.ci', 'artifacts')
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
const noBrowser = existsSync(CHROMIUM) ? false : `no ${CHROMIUM} (apt-get install chromium)`

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

let guilds = 0

/** A public board of `members` members: names, some display names (one with markup in it), avatars on a fake CDN. */
async function fixture (t: Test, members = 30) {
  const ctx = await buildTestApp(t, server.url, { apiKeyCacheTtlMs: 0 })
  const guildId = String(1_730_000_000_000_000_000n + BigInt(++guilds))
  const slug = `page-${guilds}`
  await ctx.writer.bulkSetMembers(guildId, Array.from({ length: members }, (_, i) => ({
    userId: String(i + 1),
    xp: 1000 + 997 * i,
    username: `member_${i + 1}`,
    ...(i === members - 1 ? { displayName: '<script>alert(1)</script> & "co"' } : i % 3 === 0 ? { displayName: `Nick ${i + 1} ✨` } : {}),
    ...(i % 2 === 0 ? { avatarUrl: `https://cdn.example/avatars/${i + 1}.png` } : {})
  })))
  await ctx.writer.configureGuild(guildId, { name: 'Cozy <Café>', iconUrl: 'https://cdn.example/icon.png', public: { enabled: true, slug } })
  return { ...ctx, guildId, slug }
}

function tempDir (t: Test, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

async function launch (t: Test): Promise<Browser> {
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', `--user-data-dir=${tempDir(t, 'lb-chromium-')}`]
  })
  t.teardown(async () => { await browser.close() })
  return browser
}

// A 1×1 PNG in a colour per image: the "CDN" the avatars and the icon come from, served by the test.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')

/** A page whose requests to https://cdn.example/ are answered with an image, and whose console errors are kept. */
async function newPage (t: Test, browser: Browser, javaScript: boolean): Promise<{ page: Page, problems: string[] }> {
  const page = await browser.newPage()
  const problems: string[] = []
  await page.setJavaScriptEnabled(javaScript)
  await page.setRequestInterception(true)
  page.on('request', (request) => {
    const handled = request.url().startsWith('https://cdn.example/')
      ? request.respond({ status: 200, contentType: 'image/png', body: PNG })
      : request.continue()
    handled.catch((err: unknown) => { problems.push(`request interception: ${String(err)}`) })
  })
  page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()) })
  page.on('pageerror', (error) => { problems.push(String(error)) })
  t.teardown(async () => { await page.close() })
  return { page, problems }
}

/** axe-core's serious and critical violations of the page as it is (its script injected past the page's CSP). */
async function accessibility (page: Page): Promise<string[]> {
  await page.evaluate(AXE)
  const result = await page.evaluate('axe.run(document, { resultTypes: ["violations"] })') as { violations: Array<{ id: string, impact: string, nodes: unknown[] }> }
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}, ${v.nodes.length} nodes)`)
}

const rowTexts = async (page: Page): Promise<string[]> => await page.$$eval('#board tbody tr', (trs) => trs.map((tr) => tr.textContent ?? ''))

t.test('in a browser: the rows without JavaScript, a change with it without a reload; screenshots; no serious accessibility violation', { skip: noBrowser }, async (t) => {
  const { app, writer, guildId, slug } = await fixture(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const browser = await launch(t)
  mkdirSync(ARTIFACTS, { recursive: true })

  const plain = await newPage(t, browser, false)
  const response = await plain.page.goto(`${base}/p/${slug}?limit=10`)
  t.equal(response?.status(), 200)
  t.match(response?.headers()['content-security-policy'], /script-src 'sha256-[^']+'; style-src 'sha256-/, 'its own CSP, by hashes')
  const rows = await rowTexts(plain.page)
  t.equal(rows.length, 10, 'ten rows, with no script running')
  t.match(rows[0], /^1/, 'rank 1 first')
  t.equal(await plain.page.$eval('h1', (h) => h.textContent), 'Cozy <Café>', 'the server name, as text')
  t.equal(await plain.page.evaluate('document.body.dataset.updates ?? null'), null, 'no script ran')
  t.same(await plain.page.$$eval('nav.pages a', (links) => links.map((a) => a.textContent)), ['2', '3', 'Next'], 'links through the board, none before page 1')
  // axe runs on timers, which a page without JavaScript never fires: scripts back on for it, after
  // the load (the page's own script, skipped then, does not run now).
  await plain.page.setJavaScriptEnabled(true)
  t.equal(await plain.page.evaluate("document.getElementById('live').classList.contains('on')"), false, 'still not live')
  t.same(await accessibility(plain.page), [], 'axe: no serious or critical violation in the page as served')

  const live = await newPage(t, browser, true)
  await live.page.setViewport({ width: 1280, height: 800 })
  await live.page.goto(`${base}/p/${slug}?limit=10`)
  await live.page.waitForFunction("document.getElementById('live').classList.contains('on')", { timeout: 20_000 })
    .catch((err: Error) => { throw new Error(`${err.message}; console: ${live.problems.join(' | ')}`) })
  await live.page.evaluate("window.marker = 'same page'")
  const before = await rowTexts(live.page)
  await writer.awardXp({ guildId, userId: '1', xp: 100_000, displayName: 'Climber' })
  await live.page.waitForFunction("[...document.querySelectorAll('#board tbody tr')][0]?.dataset.user === '1'", { timeout: 20_000 })
  const after = await rowTexts(live.page)
  t.match(after[0], /^1Climber/, 'the change arrived: user 1 is rank 1 now')
  t.equal(after.length, 10)
  t.not(after.join('|'), before.join('|'))
  t.equal(await live.page.evaluate('window.marker'), 'same page', 'without a reload')
  t.equal(await live.page.$eval('#board tbody tr', (tr) => tr.className), 'changed', 'the changed row is marked')
  t.same(live.problems, [], 'no console errors (no CSP violation)')

  await live.page.screenshot({ path: join(ARTIFACTS, 'board-page-1280x800.png') })
  t.same(await accessibility(live.page), [], 'axe: no serious or critical violation at 1280 px')
  await live.page.setViewport({ width: 390, height: 844 })
  await live.page.screenshot({ path: join(ARTIFACTS, 'board-page-390x844.png') })
  t.same(await accessibility(live.page), [], 'nor at 390 px')
  t.ok(await live.page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), 'no sideways scroll at 390 px')
  await live.page.setViewport({ width: 360, height: 740 })
  t.ok(await live.page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), 'nor at 360 px')

  const embedded = await newPage(t, browser, true)
  await embedded.page.setViewport({ width: 600, height: 700 })
  await embedded.page.goto(`${base}/p/${slug}?embed=1&period=week`)
  t.equal(await embedded.page.$('nav.periods'), null, 'embedded: no period links')
  await embedded.page.screenshot({ path: join(ARTIFACTS, 'board-page-embed-600x700.png') })
  t.same(await accessibility(embedded.page), [], 'axe: embedded too')
})

t.test('the card is SVG with the name as text, in a browser', { skip: noBrowser }, async (t) => {
  const { app, slug } = await fixture(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const browser = await launch(t)
  const { page } = await newPage(t, browser, true)
  const response = await page.goto(`${base}/public/v1/${slug}/members/30/card.svg`)
  t.equal(response?.status(), 200)
  t.equal(response?.headers()['content-type'], 'image/svg+xml; charset=utf-8')
  t.equal(await page.evaluate('document.documentElement.namespaceURI'), 'http://www.w3.org/2000/svg', 'parsed as SVG')
  t.equal(await page.evaluate("document.getElementsByTagName('parsererror').length"), 0, 'well-formed')
  t.equal(await page.evaluate("document.getElementsByTagName('script').length"), 0, 'the name made no element')
  t.match(await page.evaluate('document.documentElement.textContent'), /<script>alert\(1\)<\/script> & "co"/, 'it is text')
  await page.setViewport({ width: 600, height: 160 })
  mkdirSync(ARTIFACTS, { recursive: true })
  await page.screenshot({ path: join(ARTIFACTS, 'rank-card.png') })
})

t.test('names are escaped in the page; a framed page must ask for it; the page is cached and revalidated', async (t) => {
  const { app, slug } = await fixture(t)
  const res = await app.inject({ url: `/p/${slug}?limit=100` })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'text/html; charset=utf-8')
  t.notMatch(res.body, /<script>alert/, 'no markup from a name')
  t.match(res.body, /&#60;script&#62;alert\(1\)&#60;\/script&#62; &#38; &#34;co&#34;/, 'escaped')
  t.match(res.body, /<h1>Cozy &#60;Café&#62;<\/h1>/)
  t.match(res.headers['content-security-policy'], /frame-ancestors 'none'/)
  const embed = await app.inject({ url: `/p/${slug}?embed=1` })
  t.match(embed.headers['content-security-policy'], /frame-ancestors \*/, '?embed=1 may be framed')
  t.equal((await app.inject({ url: `/p/${slug}?limit=100`, headers: { 'if-none-match': String(res.headers.etag) } })).statusCode, 304)
  const missing = await app.inject({ url: '/p/no-such-board' })
  t.equal(missing.statusCode, 404)
  t.match(missing.headers['content-type'], /^text\/html/, 'an unknown board is a page too')
  t.match(missing.body, /No such board/)
})

t.test('a page of 100 rows stays under 30 KB compressed', async (t) => {
  const { app, slug } = await fixture(t, 300)
  const res = await app.inject({ url: `/p/${slug}?limit=100&page=2`, headers: { 'accept-encoding': 'gzip' } })
  t.equal(res.headers['content-encoding'], 'gzip')
  const plain = await app.inject({ url: `/p/${slug}?limit=100&page=2` })
  t.equal((plain.body.match(/<tr data-user/g) ?? []).length, 100)
  t.ok(res.rawPayload.length < 30 * 1024, `${res.rawPayload.length} bytes compressed (${plain.rawPayload.length} plain)`)
  t.ok(gzipSync(plain.rawPayload).length < 30 * 1024)
})

t.test('the page shows the current season once seasons are on, and no hidden member', async (t) => {
  const { app, writer, guildId, slug } = await fixture(t)
  const page = async (): Promise<string> => (await app.inject({ url: `/p/${slug}` })).body
  t.notMatch(await page(), /Season 1/, 'no season without seasons')
  await writer.configureGuild(guildId, { season: { every: 'week', timezone: 'UTC' } })
  await writer.awardXp({ guildId, userId: '3', xp: 10 })
  t.match(await page(), /XP in all · Season 1<\/p>/, 'the current season, once a schedule runs')
  await writer.endSeason(guildId, { name: 'Winter <cup>' })
  t.match(await page(), /XP in all · Winter &#60;cup&#62;<\/p>/, 'a season ended: the new one, escaped')

  const top = (body: string): string | undefined => /<tr data-user="(\d+)"/.exec(body)?.[1]
  t.equal(top(await page()), '30')
  await writer.setVisibility({ guildId, userId: '30', visible: false, reason: 'left' })
  const hidden = await page()
  t.equal(top(hidden), '29', 'a hidden member leaves the page')
  t.notMatch(hidden, /data-user="30"/)
  t.match(hidden, /of <span id="total">29<\/span>/)
  t.equal((await app.inject({ url: `/public/v1/${slug}/members/30/card.svg` })).statusCode, 404, 'and has no card')
})

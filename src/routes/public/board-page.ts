// A public board as a page (/p/{slug}) and a member's rank card
// (/public/v1/{slug}/members/{user_id}/card.svg): rendered from the same reads as the public JSON
// (src/http/board-page.ts, src/http/rank-card.ts), admitted the same way (access `public`: the
// count per client address, the slug's server, the 304), and kept in the response cache by the
// server's data version like any read.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { LeaderboardReader, Versioned } from '../../reader/leaderboard-reader.js'
import { memberFound } from '../../reader/leaderboard-reader.js'
import { boardPagePolicy, escapeHtml, PAGE_ROWS, renderBoardPage } from '../../http/board-page.js'
import { renderRankCard } from '../../http/rank-card.js'
import { PERIODS, type Period } from '../../periods/periods.js'
import { LIMIT_MAX, PAGE_MAX } from '../../schemas/leaderboard.js'
import { SETTINGS_LIMITS } from '../../settings/settings.js'
import { SettingsStore } from '../../settings/settings-store.js'
import { SNOWFLAKE_PATTERN } from '../../snowflake.js'
import type { PublicAccess } from '../../pipeline/access.js'
import { publicErrorResponses } from '../../schemas/responses.js'
import { responseHeaders } from '../../schemas/headers.js'

const Slug = Type.String({ pattern: SETTINGS_LIMITS.slug.source, description: "The public board's slug" })

const PageQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_MAX, default: 1 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMIT_MAX, default: PAGE_ROWS })),
  period: Type.Optional(Type.Enum([...PERIODS], { default: 'all' })),
  embed: Type.Optional(Type.Enum(['0', '1']))
})

const lower = (a: string, b: string): string => BigInt(a) <= BigInt(b) ? a : b

/** Reads made together for one body: the lowest of their data versions is the body's (a cached body is never newer than it says). */
async function together<A, B> (a: Promise<Versioned<A>>, b: Promise<Versioned<B>>): Promise<{ version: string, nowMs?: number, values: [A, B] }> {
  const [x, y] = await Promise.all([a, b])
  return { version: lower(x.version, y.version), nowMs: x.nowMs ?? y.nowMs, values: [x.value, y.value] }
}

const HTML = 'text/html; charset=utf-8'

/** An error of a page as a page: its status and headers kept, its message shown. */
function errorPage (reply: FastifyReply, payload: unknown): string {
  let message = 'Something went wrong.'
  try { message = (JSON.parse(String(payload)) as { message?: string }).message ?? message } catch {}
  const status = reply.statusCode
  const title = status === 404 ? 'No such board' : status === 429 ? 'Too many requests' : status === 503 ? 'Busy: try again soon' : 'This page cannot be shown'
  reply.type(HTML)
  return '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${title}</title></head><body><main><h1>${title}</h1><p>${escapeHtml(message)}</p></main></body></html>\n`
}

/** The page at /p/{slug}; registered beside the API's scopes (it needs the public admission and the reads). */
export async function boardPageRoutes (fastify: FastifyInstance): Promise<void> {
  const settingsStore = new SettingsStore(fastify.redisClient, fastify.keys)
  const access: PublicAccess = { kind: 'public', slug: (p: { slug: string }) => p.slug, perDay: (q: { period?: Period }) => q.period !== undefined && q.period !== 'all' }
  // Errors of this page (no board, the address's limit, Redis away) are pages too.
  fastify.addHook('onSend', async (_request, reply, payload) => reply.statusCode >= 400 ? errorPage(reply, payload) : payload)

  fastify.get('/p/:slug', {
    schema: { hide: true, params: Type.Object({ slug: Slug }), querystring: PageQuery },
    config: { access },
    // The page's policy on every answer, a 304 included: a browser keeps the headers of a 304
    // in place of the ones it had, and the API's own policy would block the page's style and script.
    onRequest: (request, reply, done) => {
      reply.header('content-security-policy', boardPagePolicy((request.query as { embed?: unknown }).embed === '1'))
      done()
    },
    compress: false // served compressed from the response cache
  }, async (request: FastifyRequest, reply: FastifyReply) => {
    const { slug } = request.params as { slug: string }
    const query = request.query as { page: number, limit: number, period: Period, embed?: '0' | '1' }
    const embed = query.embed === '1'
    return await fastify.serveRendered(request, reply, HTML, async () => {
      const reader: LeaderboardReader = fastify.leaderboard
      const guildId = request.publicServer as string
      const [{ version, nowMs, values: [stats, board] }, seasons, settings] = await Promise.all([
        together(reader.readStats(guildId), reader.readPage(guildId, query.page, query.limit, query.period)),
        reader.readSeasons(guildId, 1, 1),
        settingsStore.read(guildId)
      ])
      const current = seasons.value.data[0]
      // Seasons are on with a schedule, or once one was ended by hand.
      const season = current !== undefined && (settings.season.every !== 'none' || seasons.value.total > 1) ? current.name : null
      return { version: lower(version, seasons.version), nowMs, value: renderBoardPage({ slug, stats, board, period: query.period, limit: query.limit, embed, season }) }
    })
  })
}

/** The rank card, under /public/v1 with the public reads. */
export async function rankCardRoutes (fastify: FastifyInstance): Promise<void> {
  const access: PublicAccess = { kind: 'public', slug: (p: { slug: string }) => p.slug }
  fastify.get('/:slug/members/:user_id/card.svg', {
    schema: {
      operationId: 'getPublicRankCard',
      tags: ['public'],
      summary: "A member's rank card: an SVG image of its name, rank, level and XP, on a public board (no key)",
      security: [],
      params: Type.Object({ slug: Slug, user_id: Type.String({ pattern: SNOWFLAKE_PATTERN, description: 'Member (user) id' }) }),
      response: {
        200: {
          description: 'The card (600 × 160)',
          headers: responseHeaders.read,
          content: { 'image/svg+xml': { schema: Type.String() } }
        },
        304: { description: 'Not Modified: the If-None-Match header holds the current ETag (counted against the address\'s limit)', headers: responseHeaders.read },
        ...publicErrorResponses('`member_not_found`: the user is not a member (or is hidden)')
      }
    },
    config: { access },
    compress: false
  }, async (request: FastifyRequest, reply: FastifyReply) => {
    const { user_id: userId } = request.params as { user_id: string }
    return await fastify.serveRendered(request, reply, 'image/svg+xml; charset=utf-8', async () => {
      const guildId = request.publicServer as string
      const { version, nowMs, values: [member, stats] } =
        await together(fastify.leaderboard.readMember(guildId, userId), fastify.leaderboard.readStats(guildId))
      return { version, nowMs, value: renderRankCard(memberFound({ value: member }, guildId, userId).value, stats) }
    })
  })
}

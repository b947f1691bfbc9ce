// The OpenAPI document: valid (swagger-parser), clean under Redocly's recommended rules, with
// named schemas, operation ids and documented headers; and true: real answers of a live app, for
// every status a client meets, carry what the document says, in the shape it says.
import t, { type Test } from 'tap'
import SwaggerParser from '@apidevtools/swagger-parser'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { LightMyRequestResponse } from 'fastify'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp, type TestApp } from './helpers/app.js'
import { ERROR_CODES } from '../src/http/error-codes.js'
import { namedSchemas } from '../src/schemas/index.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const GUILD = '1300000000000000001'
const OTHER_GUILD = '1300000000000000002'
const API = `/api/v1/servers/${GUILD}`

interface HeaderObject { schema: Record<string, unknown>, required?: boolean }
interface ResponseObject { description: string, headers?: Record<string, HeaderObject>, content?: Record<string, { schema: Record<string, unknown> }> }
interface Operation { operationId?: string, security?: unknown[], parameters?: Array<{ name: string, in: string, required?: boolean, schema: Record<string, unknown> }>, responses: Record<string, ResponseObject> }
interface Document {
  openapi: string
  servers?: Array<{ url: string }>
  security?: unknown[]
  info: { license?: { name: string } }
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, { properties?: Record<string, { enum?: string[] }>, required?: string[] }>, securitySchemes: Record<string, unknown> }
}

async function documentOf (app: TestApp['app']): Promise<Document> {
  const res = await app.inject({ url: '/api/v1/openapi.json' })
  t.equal(res.statusCode, 200)
  return res.json()
}

function operations (document: Document): Map<string, Operation & { path: string, method: string }> {
  const found = new Map<string, Operation & { path: string, method: string }>()
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) found.set(operation.operationId ?? `${method} ${path}`, { ...operation, path, method })
  }
  return found
}

const ctx = await buildTestApp(t, server.url, { planLimits: { free: 4, starter: 1000, professional: 10000 }, rateLimitWindowMs: 60_000, authFailureLimit: 3 })
const document = await documentOf(ctx.app)

// Bodies and headers are checked against the document's own schemas.
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats.default(ajv)
ajv.addSchema({ ...document, $id: 'openapi.json' }, undefined, undefined, false)

t.test('swagger-parser validates the document', async (t) => {
  // It dereferences in place: give it a copy.
  const api = await SwaggerParser.validate(structuredClone(document) as never)
  t.match(api, { openapi: '3.1.0' })
})

t.test("Redocly's recommended rules find nothing to report", async (t) => {
  const config = await createConfig({ extends: ['recommended'] })
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config })
  const report = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`)
  t.same(report.filter((line) => line.startsWith('error')), [], 'no errors')
  t.same(report, [], 'no warnings either')
})

t.test('every operation has an id, servers are set, and only the service endpoints and public boards need no key', async (t) => {
  const byId = operations(document)
  t.same([...byId.keys()].sort(), ['getHealth', 'getLeaderboard', 'getLeaderboardAroundMember', 'getMe', 'getMember', 'getMemberHistory', 'getMembers',
    'getPublicLeaderboard', 'getPublicMember', 'getPublicRankCard', 'getPublicStats', 'getReadiness', 'getRoleRewards', 'getSeasons', 'getStats', 'getStatsHistory',
    'streamLeaderboard', 'streamMember', 'streamPublicLeaderboard', 'streamPublicMember', 'streamPublicStats', 'streamStats'])
  t.same(document.servers, [{ url: '/', description: 'This instance' }])
  t.same(document.security, [{ apiKey: [] }], 'a key by default')
  t.match(document.components.securitySchemes.apiKey, { type: 'apiKey', in: 'header', name: 'x-api-key' })
  for (const id of ['getHealth', 'getReadiness', 'getPublicLeaderboard', 'getPublicMember', 'getPublicStats', 'streamPublicLeaderboard']) {
    t.same(byId.get(id)?.security, [], `${id}: no key`)
  }
  for (const id of ['getLeaderboard', 'getMember', 'getStats', 'getLeaderboardAroundMember', 'getMembers', 'getMe']) t.equal(byId.get(id)?.security, undefined, `${id}: the default`)
  t.equal(document.info.license?.name, 'MIT')
})

t.test('response bodies are named schemas, referred to by $ref', async (t) => {
  t.same(Object.keys(document.components.schemas).sort(), namedSchemas.map((s) => s.$id).sort())
  const refOf = (id: string, status: string) => operations(document).get(id)?.responses[status]?.content?.['application/json']?.schema.$ref
  t.equal(refOf('getLeaderboard', '200'), '#/components/schemas/LeaderboardPage')
  t.equal(refOf('getMember', '200'), '#/components/schemas/MemberRecord')
  t.equal(refOf('getStats', '200'), '#/components/schemas/GuildStats')
  t.equal(refOf('getLeaderboardAroundMember', '200'), '#/components/schemas/AroundPage')
  t.equal(refOf('getMembers', '200'), '#/components/schemas/MemberList')
  t.match(document.components.schemas.MemberList, { properties: { data: { items: { $ref: '#/components/schemas/MemberRecord' } }, missing: { type: 'array' } } })
  t.match(document.components.schemas.MemberRecord, { properties: { weekly_xp: { type: 'integer' }, monthly_xp: { type: 'integer' }, level_progress: { type: 'object' } } })
  t.equal(refOf('getHealth', '200'), '#/components/schemas/HealthStatus')
  t.equal(refOf('getMember', '404'), '#/components/schemas/Error')
  t.match(document.components.schemas.LeaderboardPage, { properties: { data: { type: 'array', items: { $ref: '#/components/schemas/LeaderboardEntry' } } } })
  for (const schema of namedSchemas) {
    t.same(document.components.schemas[schema.$id]?.required, schema.required, `${schema.$id}: the TypeBox schema's required properties`)
  }
})

t.test("the Error schema's code lists every code the service sends, each with one status", async (t) => {
  const codes = document.components.schemas.Error?.properties?.code?.enum
  t.same(codes, ERROR_CODES)
  t.same([...ERROR_CODES].sort(), [
    'bad_request', 'board_not_found', 'forbidden', 'headers_too_large', 'internal_error', 'invalid_api_key', 'invalid_parameter', 'member_not_found',
    'missing_api_key', 'not_found', 'payload_too_large', 'rate_limited', 'request_timeout', 'season_not_found', 'service_unavailable'
  ])
  const validate = ajv.compile({ $ref: 'openapi.json#/components/schemas/Error' })
  t.ok(validate({ statusCode: 404, error: 'Not Found', code: 'member_not_found', message: 'm' }))
  t.notOk(validate({ statusCode: 418, error: "I'm a Teapot", code: 'teapot', message: 'm' }), 'a code not in the list is refused')
})

t.test('read endpoints document their parameters, the 304 and their errors', async (t) => {
  const leaderboard = operations(document).get('getLeaderboard')
  const limit = leaderboard?.parameters?.find((p) => p.name === 'limit')
  t.match(limit, { in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 } })
  t.match(leaderboard?.parameters?.find((p) => p.name === 'if-none-match'), { in: 'header', required: false, schema: { type: 'string' } })
  t.notOk(leaderboard?.parameters?.some((p) => p.name === 'x-api-key'), 'the key is the security scheme, not a parameter')
  const period = leaderboard?.parameters?.find((p) => p.name === 'period')
  t.match(period, { in: 'query', required: false, schema: { enum: ['all', 'week', 'month', 'last_week', 'last_month'], default: 'all' } })
  t.match(operations(document).get('getLeaderboardAroundMember')?.parameters?.find((p) => p.name === 'radius'), { schema: { type: 'integer', minimum: 0, maximum: 50, default: 5 } })
  t.match(operations(document).get('getMembers')?.parameters?.find((p) => p.name === 'ids'), { in: 'query', required: true })
  const season = leaderboard?.parameters?.find((p) => p.name === 'season')
  t.match(season, { in: 'query', required: false, schema: { type: 'string', pattern: '^(current|[1-9][0-9]{0,8})$' } })
  for (const id of ['getLeaderboard', 'getMember', 'getStats', 'getLeaderboardAroundMember', 'getMembers', 'getSeasons', 'getMemberHistory', 'getStatsHistory']) {
    const responses = operations(document).get(id)?.responses ?? {}
    const expected = ['200', '304', '400', '401', '403', '429', '4XX', '500', '503', ...(['getStats', 'getSeasons', 'getStatsHistory'].includes(id) ? [] : ['404'])]
    t.same(Object.keys(responses).sort(), expected.sort(), id)
    t.equal(responses['304']?.content, undefined, `${id}: a 304 has no body`)
    for (const name of ['etag', 'cache-control', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-request-id']) {
      t.equal(responses['200']?.headers?.[name]?.required, true, `${id} 200: ${name}`)
      t.equal(responses['304']?.headers?.[name]?.required, true, `${id} 304: ${name}`)
    }
    t.equal(responses['429']?.headers?.['retry-after']?.required, true, `${id} 429: retry-after`)
    t.equal(responses['503']?.headers?.['retry-after']?.required, true, `${id} 503: retry-after`)
    t.notOk(Object.values(responses['200']?.headers ?? {}).some((h) => 'required' in h.schema), 'required is a field of the header, not of its schema')
  }
})

// Live answers against the document: the response for the status (or its range) exists, the body
// validates against its schema, and every header the document says is always there is there,
// and valid.

function headerValue (schema: Record<string, unknown>, value: string): unknown {
  return (schema.type === 'integer' || schema.type === 'number') && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value
}

function checkAgainstDocument (t: Test, operationId: string, res: LightMyRequestResponse, what: string): void {
  const operation = operations(document).get(operationId)
  const status = String(res.statusCode)
  const response = operation?.responses[status] ?? operation?.responses[`${status[0] ?? ''}XX`]
  if (response === undefined) {
    t.fail(`${what}: ${status} is not documented for ${operationId}`)
    return
  }
  const schema = response.content?.['application/json']?.schema
  if (schema === undefined) {
    t.equal(res.body, '', `${what}: no body`)
  } else {
    t.match(res.headers['content-type'], /^application\/json/, `${what}: JSON`)
    const validate = ajv.compile({ $ref: `openapi.json${String(schema.$ref)}` })
    t.ok(validate(res.json()), `${what}: the body is a ${String(schema.$ref)}`, { errors: validate.errors })
  }
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    const value = res.headers[name]
    if (value === undefined) {
      t.notOk(header.required, `${what}: ${name} is optional`)
      continue
    }
    const validate = ajv.compile(header.schema)
    t.ok(validate(headerValue(header.schema, String(value))), `${what}: ${name}: ${String(value)}`, { errors: validate.errors })
  }
}

t.test('live answers of every status are what the document says', async (t) => {
  const { app, writer, apiKeys } = ctx
  const { key } = await apiKeys.create({ guildId: GUILD, plan: 'professional' })
  await writer.awardXp({ guildId: GUILD, userId: '11', xp: 300, username: 'Ada' })
  await writer.claimDaily({ guildId: GUILD, userId: '11' })
  await writer.awardXp({ guildId: GUILD, userId: '12', xp: 100 })
  const get = async (url: string, headers: Record<string, string> = {}) => await app.inject({ url, headers })
  const seen = new Set<number>()
  const check = (operationId: string, res: LightMyRequestResponse, what: string, status: number): void => {
    t.equal(res.statusCode, status, what)
    seen.add(res.statusCode)
    checkAgainstDocument(t, operationId, res, what)
  }

  const page = await get(`${API}/leaderboard?limit=5`, { 'x-api-key': key })
  check('getLeaderboard', page, 'leaderboard 200', 200)
  t.equal(page.json().data.length, 2)
  check('getLeaderboard', await get(`${API}/leaderboard?page=9`, { 'x-api-key': key }), 'leaderboard past the end', 200)
  check('getMember', await get(`${API}/members/11`, { 'x-api-key': key }), 'member who claimed', 200)
  check('getMember', await get(`${API}/members/12`, { 'x-api-key': key }), 'member who never claimed (null)', 200)
  check('getLeaderboard', await get(`${API}/leaderboard?period=week`, { 'x-api-key': key }), 'week board', 200)
  const around = await get(`${API}/members/12/around?radius=1`, { 'x-api-key': key })
  check('getLeaderboardAroundMember', around, 'around 200', 200)
  check('getLeaderboardAroundMember', await get(`${API}/members/12/around?radius=1`, { 'x-api-key': key, 'if-none-match': String(around.headers.etag) }), 'around 304', 304)
  check('getLeaderboardAroundMember', await get(`${API}/members/99/around`, { 'x-api-key': key }), 'around a non-member', 404)
  check('getLeaderboardAroundMember', await get(`${API}/members/12/around?radius=51`, { 'x-api-key': key }), 'radius too large', 400)
  check('getMembers', await get(`${API}/members?ids=11,99,12`, { 'x-api-key': key }), 'members 200', 200)
  check('getMembers', await get(`${API}/members?ids=11,11`, { 'x-api-key': key }), 'a repeated id', 400)
  check('getLeaderboard', await get(`${API}/leaderboard?season=current`, { 'x-api-key': key }), 'the current season', 200)
  check('getLeaderboard', await get(`${API}/leaderboard?season=7`, { 'x-api-key': key }), 'a season never started', 404)
  check('getLeaderboard', await get(`${API}/leaderboard?season=current&period=week`, { 'x-api-key': key }), 'season with period', 400)
  check('getMember', await get(`${API}/members/11?season=current`, { 'x-api-key': key }), 'a member in the season', 200)
  check('getMembers', await get(`${API}/members?ids=11,99&season=1`, { 'x-api-key': key }), 'members in season 1', 200)
  check('getSeasons', await get(`${API}/seasons`, { 'x-api-key': key }), 'seasons', 200)
  check('getMemberHistory', await get(`${API}/members/11/history?days=7`, { 'x-api-key': key }), 'a member\'s history', 200)
  check('getMemberHistory', await get(`${API}/members/99/history`, { 'x-api-key': key }), 'a non-member\'s history', 404)
  check('getMemberHistory', await get(`${API}/members/11/history?days=91`, { 'x-api-key': key }), 'days past 90', 400)
  check('getStatsHistory', await get(`${API}/stats/history`, { 'x-api-key': key }), 'stats history', 200)
  const stats = await get(`${API}/stats`, { 'x-api-key': key })
  check('getStats', stats, 'stats 200', 200)
  check('getStats', await get(`${API}/stats`, { 'x-api-key': key, 'if-none-match': String(stats.headers.etag) }), 'stats 304', 304)
  check('getLeaderboard', await get(`${API}/leaderboard?limit=5`, { 'x-api-key': key, 'if-none-match': String(page.headers.etag) }), 'leaderboard 304', 304)
  check('getLeaderboard', await get(`${API}/leaderboard?limit=0`, { 'x-api-key': key }), 'bad limit', 400)
  const badUserId = await get(`${API}/members/007`, { 'x-api-key': key })
  check('getMember', badUserId, 'bad user_id', 400)
  t.ok(badUserId.headers['x-ratelimit-remaining'] !== undefined, 'a bad parameter is counted, and says so')
  check('getMember', await get(`${API}/members/%E0%A4%A`, { 'x-api-key': key }), 'a URL that is not valid', 400)
  check('getStats', await get(`${API}/stats`), 'no key', 401)
  check('getStats', await get(`${API}/stats`, { 'x-api-key': 'lbk_0000000000000000_nope' }), 'unknown key', 401)
  check('getStats', await get(`/api/v1/servers/${OTHER_GUILD}/stats`, { 'x-api-key': key }), 'another server', 403)
  check('getMember', await get(`${API}/members/99`, { 'x-api-key': key }), 'not a member', 404)

  const free = (await apiKeys.create({ guildId: GUILD, plan: 'free' })).key
  for (let i = 0; i < 4; i++) check('getStats', await get(`${API}/stats`, { 'x-api-key': free }), `free key, request ${i + 1}`, 200)
  const limited = await get(`${API}/stats`, { 'x-api-key': free })
  check('getStats', limited, "past the plan's limit", 429)
  t.ok(limited.headers['x-ratelimit-limit'] !== undefined, "the plan's 429 carries x-ratelimit-*")
  // A third failed authentication from this address locks it out (AUTH_FAILURE_LIMIT 3).
  check('getStats', await get(`${API}/stats`, { 'x-api-key': 'lbk_0000000000000000_nope2' }), 'unknown key again', 401)
  check('getStats', await get(`${API}/stats`, { 'x-api-key': 'lbk_0000000000000000_nope3' }), 'failed authentications', 429)

  check('getHealth', await get('/healthz'), 'healthz', 200)
  check('getReadiness', await get('/readyz'), 'readyz', 200)
  t.same([...seen].sort(), [200, 304, 400, 401, 403, 404, 429])
})

t.test('503s are what the document says: readiness while draining, reads while Redis is away', async (t) => {
  const own = await RedisServer.start()
  t.teardown(async () => { await own.close() })
  const { app, apiKeys } = await buildTestApp(t, own.url)
  const { key } = await apiKeys.create({ guildId: GUILD, plan: 'professional' })
  await own.stop()
  const read = await app.inject({ url: `${API}/stats`, headers: { 'x-api-key': key } })
  t.equal(read.statusCode, 503)
  checkAgainstDocument(t, 'getStats', read, 'stats, Redis down')
  app.lifecycle.drain()
  const ready = await app.inject({ url: '/readyz' })
  t.equal(ready.statusCode, 503)
  checkAgainstDocument(t, 'getReadiness', ready, 'readyz, draining')
})

t.test('the document is also served, identical, to the docs page', async (t) => {
  const res = await ctx.app.inject({ url: '/api/v1/docs/json' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), document)
})

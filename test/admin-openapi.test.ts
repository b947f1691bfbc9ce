// The write API's own OpenAPI document (/admin/v1/openapi.json on ADMIN_PORT): valid, clean under
// Redocly's recommended rules, every operation named and needing a bearer token, real answers in
// the documented shapes; and the read API's document still holds no write.
import t from 'tap'
import SwaggerParser from '@apidevtools/swagger-parser'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestAdmin } from './helpers/admin.js'
import { readFileSync } from 'node:fs'
import { ADMIN_STATUS_BY_CODE } from '../src/http/error-codes.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

interface Operation { operationId?: string, security?: unknown[], responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }> }
type Document = { paths: Record<string, Record<string, Operation>>, security: unknown[], components: { securitySchemes: Record<string, unknown> } }

const ctx = await buildTestAdmin(t, server.url)
const document = (await ctx.admin.inject({ url: '/admin/v1/openapi.json' })).json() as Document
const publicDocument = (await ctx.app.inject({ url: '/api/v1/openapi.json' })).json() as Document
const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, ...op })))

t.test('swagger-parser validates it, and Redocly\'s recommended rules find nothing to report', async (t) => {
  t.match(await SwaggerParser.validate(structuredClone(document) as never), { openapi: '3.1.0' })
  const config = await createConfig({ extends: ['recommended'] })
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config })
  t.same(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`), [])
})

t.test('every operation of the write API is named, needs a bearer token, and lives under /admin/v1', async (t) => {
  t.same(operations.map((o) => o.operationId).sort(), [
    'awardXp', 'changeKey', 'claimDaily', 'createKey', 'createWebhook', 'deleteWebhook', 'endSeason', 'exportMembers', 'getHealth', 'getReadiness', 'getSettings',
    'importMembers', 'listKeys', 'listWebhookDeliveries', 'listWebhooks', 'pingWebhook', 'previewSettings', 'removeMember', 'revokeKey', 'rotateKey', 'setMember', 'setSettings',
    'setVisibility', 'setVisibilityBatch'
  ])
  t.same(document.security, [{ bearer: [] }])
  t.match(document.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer' })
  for (const o of operations) {
    if (o.path === '/healthz' || o.path === '/readyz') continue
    t.ok(o.path.startsWith('/admin/v1/'), o.path)
  }
})

t.test('the read API\'s document holds no write: GET operations only, none under /admin', async (t) => {
  const methods = Object.values(publicDocument.paths).flatMap((item) => Object.keys(item))
  t.same([...new Set(methods)], ['get'])
  t.notOk(Object.keys(publicDocument.paths).some((p) => p.startsWith('/admin')))
})

t.test('real answers match the documented bodies', async (t) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  ajv.addSchema({ ...document, $id: 'admin.json' }, undefined, undefined, false)
  const token = await ctx.token()
  const G = '8100000000000000001'
  const check = async (operationId: string, method: string, url: string, payload?: object) => {
    const res = await ctx.admin.inject({ method: method as 'GET', url: `/admin/v1${url}`, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload }) })
    const op = operations.find((o) => o.operationId === operationId)
    const schema = op?.responses[String(res.statusCode)]?.content?.['application/json']?.schema
    if (schema === undefined) {
      t.fail(`${operationId}: ${res.statusCode} is not documented with a body`)
      return res
    }
    const validate = ajv.compile({ $ref: `admin.json${String(schema.$ref ?? '').replace('#/', '#/')}` })
    t.ok(validate(res.json()), `${operationId} ${res.statusCode}: ${JSON.stringify(validate.errors)}`)
    return res
  }
  await check('awardXp', 'POST', `/servers/${G}/awards`, { awards: [{ user_id: '1', xp: 10 }] })
  await check('awardXp', 'POST', `/servers/${G}/awards`, { awards: [{ user_id: '1', xp: 0 }] })
  await check('setMember', 'PUT', `/servers/${G}/members/1`, { username: 'ann' })
  await check('claimDaily', 'POST', `/servers/${G}/members/1/daily`, {})
  await check('claimDaily', 'POST', `/servers/${G}/members/1/daily`, {})
  await check('getSettings', 'GET', `/servers/${G}/settings`)
  await check('setSettings', 'PUT', `/servers/${G}/settings`, { xp_curve: 'linear' })
  const created = await check('createKey', 'POST', `/servers/${G}/keys`, { plan: 'free' })
  await check('listKeys', 'GET', `/servers/${G}/keys`)
  await check('changeKey', 'PATCH', `/keys/${created.json().id as string}`, { name: 'x' })
  await check('rotateKey', 'POST', `/keys/${created.json().id as string}/rotate`)
  await check('removeMember', 'DELETE', `/servers/${G}/members/99`)
})

t.test('the import documents Idempotency-Key and its answers: a replay\'s header, 400, 409, 413 and 422', async (t) => {
  const op = document.paths['/admin/v1/servers/{guild_id}/import']?.post as Operation & {
    parameters: Array<{ in: string, name: string }>, responses: Record<string, { description: string, headers?: Record<string, unknown> }>
  }
  t.ok(op.parameters.some((p) => p.in === 'header' && p.name === 'idempotency-key'), 'the Idempotency-Key header')
  t.ok(op.responses['200']?.headers?.['idempotent-replayed'] !== undefined, 'idempotent-replayed on a replay')
  t.match(op.responses['400']?.description, /invalid_import_file/)
  t.match(op.responses['409']?.description, /idempotency_key_in_use/)
  t.match(op.responses['413']?.description, /payload_too_large/)
  t.match(op.responses['422']?.description, /import_refused[\s\S]*idempotency_key_reused/)
})

t.test('GET /admin/v1/docs shows the write API\'s document, with no token', async (t) => {
  const page = await ctx.admin.inject({ url: '/admin/v1/docs' })
  const html = page.statusCode === 302 ? await ctx.admin.inject({ url: String(page.headers.location).replace(/^\.\//, '/admin/v1/docs/') }) : page
  t.equal(html.statusCode, 200)
  t.match(html.headers['content-type'], /text\/html/)
  const json = await ctx.admin.inject({ url: '/admin/v1/docs/json' })
  t.match(json.json(), { info: { title: 'Guild leaderboard write API' } })
})

t.test('every error code of the write API\'s own is in the table of docs/bots.md with its status, and the table names no other', async (t) => {
  const readme = readFileSync(new URL('../docs/bots.md', import.meta.url), 'utf8')
  const rows = [...readme.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])] as const)
  t.same(Object.fromEntries(rows), ADMIN_STATUS_BY_CODE)
})

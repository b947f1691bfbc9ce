// The write API (the same buildAdminApp the server uses) against a test Redis, beside the read
// API on the same prefix, with a token maker. Everything is released in t.teardown.
import type { Test } from 'tap'
import { buildAdminApp } from '../../src/admin/admin-app.js'
import { buildTestApp, oneAtATime, type TestApp } from './app.js'
import { TokenStore } from '../../src/tokens/token-store.js'
import type { Config } from '../../src/config.js'
import type { ServerScope } from '../../src/api-keys/server-scope.js'

export interface TestAdmin extends TestApp {
  admin: ReturnType<typeof buildAdminApp>
  tokens: TokenStore
  /** A new token's plaintext (every server and every scope unless told). */
  token: (servers?: ServerScope, scopes?: string[]) => Promise<string>
}

export async function buildTestAdmin (t: Test, redisUrl: string, overrides: Partial<Config> = {}): Promise<TestAdmin> {
  const ctx = await buildTestApp(t, redisUrl, overrides)
  const admin = buildAdminApp(ctx.config)
  t.teardown(async () => { await admin.close() })
  await oneAtATime(async () => { await admin.ready() })
  const tokens = new TokenStore(ctx.redis, ctx.keys)
  const token = async (servers: ServerScope = '*', scopes = ['write', 'keys', 'transfer']): Promise<string> =>
    (await tokens.create({ name: 'test', servers, scopes })).token
  return { ...ctx, admin, tokens, token }
}

// API keys from the shell: create and rotate (the only times a key is shown), list, set-plan, set-servers, revoke.
import { type Command, Option } from 'commander'
import { type ApiKeyInfo, ApiKeyStore } from '../api-keys/api-keys.js'
import { PLANS, type Plan } from '../plans.js'
import { redisNow } from '../redis/client.js'
import { ALL_SERVERS, describeScope, type ServerScope } from '../api-keys/server-scope.js'
import { CliError, withRedis } from './connection.js'
import { print, printJson, shortDate, table } from './output.js'
import * as parse from './parsers.js'

type Status = 'active' | 'revoked' | 'expired'

/** The servers named by --guild, --servers or --all-servers (exactly one of them). */
export function scopeOption (opts: { guild?: string, servers?: string[], allServers?: boolean }, required: boolean): ServerScope | undefined {
  const given = [opts.guild !== undefined, opts.servers !== undefined, opts.allServers === true].filter(Boolean).length
  if (given > 1) throw new CliError('give one of --guild, --servers and --all-servers')
  if (given === 0) {
    if (required) throw new CliError('give the servers: --guild G, --servers G1,G2,… or --all-servers')
    return undefined
  }
  return opts.allServers === true ? ALL_SERVERS : opts.servers ?? [opts.guild as string]
}

export function addKeyCommands (program: Command): void {
  const keys = program.command('keys').description("a server's API keys")

  keys.command('create')
    .description('create an API key; the key is printed once and only its hash is stored')
    .addOption(new Option('--guild <id>', 'the one server the key reads').argParser(parse.guildId))
    .addOption(new Option('--servers <ids>', 'the servers the key reads: comma-separated ids, up to 1,000').argParser(parse.guildIds))
    .option('--all-servers', 'the key reads every server of this installation')
    .addOption(new Option('--plan <plan>', 'rate-limit plan').choices(PLANS).makeOptionMandatory())
    .addOption(new Option('--expires-in <seconds>', 'expire this many seconds from now (default never)')
      .argParser(parse.integer('expires-in', 1, Number.MAX_SAFE_INTEGER)))
    .option('--name <text>', 'a label to recognise the key by')
    .option('--json', 'print one line of JSON')
    .action(async (opts: { guild?: string, servers?: string[], allServers?: boolean, plan: Plan, expiresIn?: number, name?: string, json?: boolean }) => {
      const servers = scopeOption(opts, true)
      await withRedis(async ({ redis, keys }) => {
        const created = await new ApiKeyStore(redis, keys)
          .create({ servers, plan: opts.plan, name: opts.name, expiresInSeconds: opts.expiresIn })
        if (opts.json === true) {
          printJson({ key: created.key, ...describe(created, 'active') })
          return
        }
        print(`API key ${created.id} for ${describeScope(created.servers)} (plan ${created.plan}, expires ${created.expiresAt?.toISOString() ?? 'never'}):`)
        showOnce(created.key)
      })
    })

  keys.command('list')
    .description('list the API keys that read a server (its own, and those of several or every server), newest first (never the keys themselves)')
    .addOption(new Option('--guild <id>', 'server whose keys to list').argParser(parse.guildId).makeOptionMandatory())
    .option('--json', 'print one line of JSON (an array)')
    .action(async (opts: { guild: string, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const infos = await new ApiKeyStore(redis, keys).list(opts.guild)
        const now = await redisNow(redis)
        const described = infos.map((info) => describe(info, statusOf(info, now)))
        if (opts.json === true) {
          printJson(described)
          return
        }
        if (infos.length === 0) {
          print(`server ${opts.guild} has no API keys`)
          return
        }
        print(table(
          ['ID', 'NAME', 'SERVERS', 'PLAN', 'STATUS', 'CREATED', 'EXPIRES', 'LAST USED', 'ROTATED', 'REVOKED'],
          infos.map((info) => [
            info.id, info.name ?? '-', serversColumn(info.servers), info.plan, statusOf(info, now), shortDate(info.createdAt),
            shortDate(info.expiresAt), shortDate(info.lastUsedAt), shortDate(info.rotatedAt), shortDate(info.revokedAt)
          ])))
      })
    })

  keys.command('rotate')
    .description('give a key a new secret under the same id (server, plan, name, expiry and rate-limit count kept); ' +
      'the old key is refused on every instance within 5 seconds, the new one is printed once')
    .argument('<id>', 'the key id, as shown by keys list')
    .option('--json', 'print one line of JSON, with the new key')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const rotated = await new ApiKeyStore(redis, keys).rotate(id)
        if (opts.json === true) {
          printJson({ key: rotated.key, ...describe(rotated, 'active') })
          return
        }
        print(`API key ${rotated.id} of ${describeScope(rotated.servers)} rotated (plan ${rotated.plan}); the old key no longer works. The new key:`)
        showOnce(rotated.key)
      })
    })

  keys.command('set-plan')
    .description('move a key to another plan; its secret is unchanged and every instance applies the new limit within 5 seconds')
    .argument('<id>', 'the key id, as shown by keys list')
    .addOption(new Option('--plan <plan>', 'rate-limit plan').choices(PLANS).makeOptionMandatory())
    .option('--json', 'print one line of JSON')
    .action(async (id: string, opts: { plan: Plan, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const store = new ApiKeyStore(redis, keys)
        const before = await store.get(id)
        const info = await store.setPlan(id, opts.plan)
        if (opts.json === true) {
          printJson(describe(info, 'active'))
          return
        }
        const from = before === null || before.plan === info.plan ? `already on plan ${info.plan}` : `plan ${before.plan} -> ${info.plan}`
        print(`API key ${id} of ${describeScope(info.servers)}: ${from}`)
      })
    })

  keys.command('set-servers')
    .description('change the servers a key reads (its secret, plan and rate-limit count kept); every instance applies it ' +
      'within 5 seconds, a server taken away included')
    .argument('<id>', 'the key id, as shown by keys list')
    .addOption(new Option('--guild <id>', 'the one server the key reads from now on').argParser(parse.guildId))
    .addOption(new Option('--servers <ids>', 'the servers it reads from now on: comma-separated ids, up to 1,000').argParser(parse.guildIds))
    .option('--all-servers', 'the key reads every server of this installation')
    .option('--json', 'print one line of JSON')
    .action(async (id: string, opts: { guild?: string, servers?: string[], allServers?: boolean, json?: boolean }) => {
      const servers = scopeOption(opts, true)
      await withRedis(async ({ redis, keys }) => {
        const store = new ApiKeyStore(redis, keys)
        const before = await store.get(id)
        const info = await store.update(id, { servers })
        if (opts.json === true) {
          printJson(describe(info, 'active'))
          return
        }
        print(`API key ${id}: ${before === null ? '' : `${describeScope(before.servers)} -> `}${describeScope(info.servers)}`)
      })
    })

  keys.command('revoke')
    .description('revoke an API key by id; every instance refuses it within 5 seconds')
    .argument('<id>', 'the key id, as shown by keys list')
    .option('--json', 'print one line of JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const store = new ApiKeyStore(redis, keys)
        const before = await store.get(id)
        const info = await store.revoke(id)
        if (opts.json === true) {
          printJson(describe(info, 'revoked'))
          return
        }
        if (before?.revokedAt != null) {
          print(`API key ${id} of ${describeScope(info.servers)} was already revoked (${info.revokedAt?.toISOString() ?? ''})`)
        } else {
          print(`revoked API key ${id} of ${describeScope(info.servers)}`)
        }
      })
    })
}

export function statusOf (info: ApiKeyInfo, now: number): Status {
  if (info.revokedAt !== null) return 'revoked'
  if (info.expiresAt !== null && info.expiresAt.getTime() <= now) return 'expired'
  return 'active'
}

/** '*', or the ids, shortened past three. */
function serversColumn (servers: ServerScope): string {
  if (servers === ALL_SERVERS) return '*'
  return servers.length <= 3 ? servers.join(',') : `${servers.slice(0, 3).join(',')},… (${servers.length})`
}

function describe (info: ApiKeyInfo, status: Status): Record<string, string | readonly string[] | null> {
  const iso = (date: Date | null): string | null => date?.toISOString() ?? null
  return {
    id: info.id,
    guild_id: info.guildId,
    servers: info.servers,
    plan: info.plan,
    name: info.name,
    status,
    created_at: iso(info.createdAt),
    expires_at: iso(info.expiresAt),
    last_used_at: iso(info.lastUsedAt),
    rotated_at: iso(info.rotatedAt),
    revoked_at: iso(info.revokedAt)
  }
}

/** A key's plaintext, set apart, with the warning that it will not be shown again. */
function showOnce (key: string): void {
  print('')
  print(`    ${key}`)
  print('')
  print('Copy it now: it is shown only this once (only its hash is stored).')
}

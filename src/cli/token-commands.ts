// Write-API tokens from the shell: create and rotate (the only times a token is shown), list, revoke.
import { type Command, Option } from 'commander'
import { SCOPES, type TokenInfo, TokenStore } from '../tokens/token-store.js'
import { ALL_SERVERS, describeScope } from '../api-keys/server-scope.js'
import { CliError, withRedis } from './connection.js'
import { print, printJson, shortDate, table } from './output.js'
import * as parse from './parsers.js'
import { scopeOption } from './key-commands.js'

const scopeList = (value: string): string[] => {
  const scopes = value.split(',').map((s) => s.trim())
  if (scopes.length === 0 || !scopes.every((s) => (SCOPES as readonly string[]).includes(s))) {
    throw new CliError(`--scopes takes one or more of ${SCOPES.join(',')}`)
  }
  return scopes
}

function describe (info: TokenInfo): Record<string, unknown> {
  return {
    id: info.id,
    name: info.name,
    servers: info.servers,
    scopes: info.scopes,
    created_at: info.createdAt.toISOString(),
    rotated_at: info.rotatedAt?.toISOString() ?? null,
    revoked_at: info.revokedAt?.toISOString() ?? null
  }
}

function showOnce (token: string): void {
  print('')
  print(`    ${token}`)
  print('')
  print('Copy it now: it is shown only this once (only its hash is stored). Send it as "Authorization: Bearer <token>".')
}

export function addTokenCommands (program: Command): void {
  const tokens = program.command('tokens').description('bearer tokens of the write API (ADMIN_PORT)')

  tokens.command('create')
    .description('create a write-API token; it is printed once and only its hash is stored')
    .requiredOption('--name <text>', 'what the token is for (a bot, a dashboard)')
    .addOption(new Option('--servers <ids>', 'the servers it may change: comma-separated ids, up to 1,000').argParser(parse.guildIds))
    .option('--all-servers', 'it may change every server (the default)')
    .addOption(new Option('--scopes <list>', `what it may do: comma-separated, of ${SCOPES.join(', ')} (default write)`).argParser(scopeList))
    .option('--json', 'print one line of JSON: {"id", "name", "servers", "scopes", "token"}')
    .action(async (opts: { name: string, servers?: string[], allServers?: boolean, scopes?: string[], json?: boolean }) => {
      const servers = scopeOption(opts, false) ?? ALL_SERVERS
      await withRedis(async ({ redis, keys }) => {
        const created = await new TokenStore(redis, keys).create({ name: opts.name, servers, scopes: opts.scopes })
        if (opts.json === true) {
          printJson({ id: created.id, name: created.name, servers: created.servers, scopes: created.scopes, token: created.token })
          return
        }
        print(`token ${created.id} "${created.name}" for ${describeScope(created.servers)}, scopes ${created.scopes.join(',')}:`)
        showOnce(created.token)
      })
    })

  tokens.command('list')
    .description('list the tokens, newest first (never the tokens themselves)')
    .option('--json', 'print one line of JSON (an array)')
    .action(async (opts: { json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const infos = await new TokenStore(redis, keys).list()
        if (opts.json === true) {
          printJson(infos.map(describe))
          return
        }
        if (infos.length === 0) {
          print('no tokens')
          return
        }
        print(table(['ID', 'NAME', 'SERVERS', 'SCOPES', 'STATUS', 'CREATED', 'ROTATED'], infos.map((info) => [
          info.id, info.name, info.servers === ALL_SERVERS ? '*' : info.servers.join(','), info.scopes.join(','),
          info.revokedAt === null ? 'active' : 'revoked', shortDate(info.createdAt), shortDate(info.rotatedAt)
        ])))
      })
    })

  tokens.command('rotate')
    .description('give a token a new secret under the same id; the old one is refused everywhere within 5 seconds')
    .argument('<id>', 'the token id, as shown by tokens list')
    .option('--json', 'print one line of JSON, with the new token')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const rotated = await new TokenStore(redis, keys).rotate(id)
        if (opts.json === true) {
          printJson({ id: rotated.id, name: rotated.name, servers: rotated.servers, scopes: rotated.scopes, token: rotated.token })
          return
        }
        print(`token ${rotated.id} rotated; the old token no longer works. The new token:`)
        showOnce(rotated.token)
      })
    })

  tokens.command('revoke')
    .description('revoke a token by id; every instance refuses it within 5 seconds')
    .argument('<id>', 'the token id, as shown by tokens list')
    .option('--json', 'print one line of JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const info = await new TokenStore(redis, keys).revoke(id)
        if (opts.json === true) printJson(describe(info))
        else print(`revoked token ${id} "${info.name}"`)
      })
    })
}

// `functions prune`: deletes the award scripts' libraries that older builds loaded into Redis
// (src/redis/functions.ts names each by its code's hash, so every upgrade adds one).
import type { Command } from 'commander'
import { pruneLibraries } from '../redis/functions.js'
import { withRedis } from './connection.js'
import { print, printJson } from './output.js'

export function addFunctionsCommand (program: Command): void {
  const functions = program.command('functions').description("the award scripts' libraries in Redis")
  functions.command('prune')
    .description('delete, on every primary, the libraries of older builds (once no instance runs one; one that still does loads its own again at its next award)')
    .option('--dry-run', 'only list what would be deleted')
    .option('--json', 'print one line of JSON')
    .action(async (opts: { dryRun?: boolean, json?: boolean }) => {
      await withRedis(async ({ redis }) => {
        const nodes = await pruneLibraries(redis, { dryRun: opts.dryRun === true })
        if (opts.json === true) {
          printJson({ dry_run: opts.dryRun === true, nodes: nodes.map((n) => ({ node: n.node, deleted: n.deleted, kept: n.kept ?? null })) })
          return
        }
        const verb = opts.dryRun === true ? 'would delete' : 'deleted'
        for (const n of nodes) {
          print(`${n.node}: ${n.deleted.length === 0 ? 'no library of an older build' : `${verb} ${n.deleted.join(', ')}`}` +
            `${n.kept === undefined ? " (this build's library is not loaded there yet)" : `; kept ${n.kept}`}`)
        }
      })
    })
}

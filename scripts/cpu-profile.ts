// A V8 CPU profile (`node --cpu-prof`) read for scripts/profile-summary.ts and profile-layers.ts:
// its nodes by id and each node's parent, to walk a sample's stack from the innermost frame out.
import { readFileSync } from 'node:fs'

export interface CallFrame { functionName: string, url: string, lineNumber: number }
export interface ProfileNode { id: number, callFrame: CallFrame, children?: number[] }
export interface Profile { nodes: ProfileNode[], samples: number[], timeDeltas: number[], startTime: number, endTime: number }

export interface ReadProfile {
  profile: Profile
  byId: Map<number, ProfileNode>
  parent: Map<number, number>
}

export function readProfile (file: string): ReadProfile {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  return { profile, byId, parent }
}

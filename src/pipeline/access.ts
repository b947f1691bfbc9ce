// What a route needs before its handler runs, declared once in its options (`config.access`),
// and the guard that holds every route of a listener to it when the app is built.
//
// The guard is an onRoute hook: it reads the declaration and attaches the hooks of its kind
// (authentication, admission, the server check, idempotency), so a route cannot declare a check
// and skip it, and it refuses, with an error at build time, a route that names a server without
// a server check, a token route without a scope, a route of the other listener's kind, and any
// route under the listener's prefix that declares nothing (only the documents there are open).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify'
import type { Scope } from '../tokens/token-store.js'

/** The server a route acts on, from its validated path parameters. */
export type ServerOf = (params: never) => string

/** The server of a route whose path names it `:guild_id`. */
export function guildOf (params: { guild_id: string }): string {
  return params.guild_id
}

/** Read with an API key (`x-api-key`): authenticated, counted against its plan, scoped to its servers. */
export interface KeyAccess {
  kind: 'key'
  /** The server the route reads, from its validated parameters; null for a route that reads none (/me). */
  server: ServerOf | null
  /** The body depends on the UTC day (so does its ETag); a function of the validated query where only some requests' do. */
  perDay?: boolean | ((query: never) => boolean)
  /** A live-update stream: capped per key, outside the requests-in-progress count. */
  stream?: boolean
}

/** A write-API route (`Authorization: Bearer`): the token must have the scope and the server. */
export interface TokenAccess {
  kind: 'token'
  scope: Scope
  /** The server the route acts on; null for a route that checks the servers itself (a key's, by id). */
  server: ServerOf | null
  /** Takes Idempotency-Key, with its body parsed before the handler (see idempotency.ts). */
  idempotent?: boolean
}

/**
 * A public board (no key): counted per client address, and the server the one whose public board
 * the slug is (resolved by admission; a slug of no public board is 404).
 */
export interface PublicAccess {
  kind: 'public'
  /** The slug, from the validated parameters. */
  slug: (params: never) => string
  /** As for key access. */
  perDay?: boolean | ((query: never) => boolean)
  /** A live-update stream: capped per client address, outside the requests-in-progress count. */
  stream?: boolean
}

/** Open to anyone: liveness, readiness, documents. */
export interface ServiceAccess {
  kind: 'service'
}

export type Access = KeyAccess | TokenAccess | PublicAccess | ServiceAccess

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route and what it touches: see src/pipeline/access.ts. */
    access?: Access
  }
  interface FastifyRequest {
    /**
     * A refusal of a query value found before validation (a check validation cannot make, such
     * as plain digits): thrown, like a validation error, once the request is counted.
     */
    refusal: Error | null
    /** A public route's server, once admission resolved its slug. */
    publicServer: string | undefined
  }
}

/**
 * The server the request acts on, by its route's declaration, from its validated path parameters
 * (undefined: the route names none, or they did not pass validation). Fastify validates the
 * parameters first: an error about anything else means they passed.
 */
export function serverOf (request: FastifyRequest): string | undefined {
  const access = request.routeOptions.config.access
  if (access?.kind === 'public') return request.publicServer
  if (access === undefined || access.kind === 'service' || access.server === null) return undefined
  if (request.validationError !== undefined && (request.validationError as FastifyError).validationContext === 'params') return undefined
  return (access.server as (params: unknown) => string)(request.params)
}

/** Whether the request's body (so its tag) depends on the UTC day, by its route's declaration and validated query. */
export function bodyDependsOnDay (request: FastifyRequest): boolean {
  const access = request.routeOptions.config.access
  if (access?.kind !== 'key' && access?.kind !== 'public') return false
  const { perDay } = access
  return typeof perDay === 'function' ? (perDay as (query: unknown) => boolean)(request.query) : perDay === true
}

/** A path parameter that names a server, in any spelling: guild, server, slug (a public board's). */
const SERVER_PARAMETER = /guild|server|slug/i

/** Whether a route's URL names a server (a parameter of that name, or one after `/servers/`). */
export function namesServer (url: string): boolean {
  const parameters = [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] ?? '')
  return parameters.some((name) => SERVER_PARAMETER.test(name)) || /\/(servers|guilds)\/:/.test(url)
}

// Async (request, reply) or callback style (request, reply, done), as Fastify takes hooks.
type Hook = (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void | Promise<unknown>

/** The hooks each kind of access runs, provided by the listener's plugins. */
export interface AccessHooks {
  /** key: authentication (onRequest). */
  authenticate?: Hook
  /** key, stream: the cap of open streams per key (onRequest, after authentication). */
  reserveStream?: Hook
  /** key: admission (preHandler): the count, the refusal of invalid input, the server check, the 304. */
  admit?: Hook
  /** public: the cap of open streams per client address (onRequest). */
  reservePublicStream?: Hook
  /** public: admission (preHandler): the count per address, the refusal of invalid input, the slug's server (404), the 304. */
  admitPublic?: Hook
  /** token: authentication and the scope (onRequest). */
  authenticateToken?: Hook
  /** token: the server check (preHandler). */
  checkTokenServer?: Hook
  /** token, idempotent: Idempotency-Key (preHandler, after the server check). */
  idempotency?: Hook
}

export interface GuardOptions {
  /** The listener's API prefixes (`/api/v1` and `/public/v1`, `/admin/v1`): every route under one declares its access. */
  prefixes: readonly string[]
  /** The kinds this listener serves (besides `service`). */
  kinds: ReadonlyArray<'key' | 'token' | 'public'>
  /** Prefixes under `prefix` open to anyone without a declaration: the documents (OpenAPI, the docs page's assets). */
  documents: readonly string[]
  /** The hooks, read when a route is added (the plugins that provide them are registered by then). */
  hooks: (fastify: FastifyInstance) => AccessHooks
}

/** Methods that change nothing: a route of only these may go undeclared when it names no server and is outside the API. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

function hooksOf (value: RouteOptions['onRequest']): Hook[] {
  if (value === undefined) return []
  return (Array.isArray(value) ? value : [value]) as Hook[]
}

function required (hook: Hook | undefined, name: string, route: string): Hook {
  if (hook === undefined) throw new Error(`${route}: this listener has no ${name} hook for its access`)
  return hook
}

/** The onRoute hook that checks each route's declaration and attaches the hooks of its kind. */
export function accessGuard (options: GuardOptions) {
  return function guard (this: FastifyInstance, route: RouteOptions): void {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const name = `${methods.join(',')} ${route.url}`
    const access = route.config?.access
    if (access === undefined) {
      const underPrefix = options.prefixes.some((prefix) => route.url === prefix || route.url.startsWith(`${prefix}/`))
      const document = options.documents.some((prefix) => route.url === prefix || route.url.startsWith(`${prefix}/`))
      if (namesServer(route.url)) throw new Error(`${name} names a server but declares no access with a server check (config.access)`)
      if (underPrefix && !document) throw new Error(`${name} declares no access (config.access)`)
      if (!methods.every((method) => SAFE_METHODS.has(method))) throw new Error(`${name} may change something but declares no access (config.access)`)
      return
    }
    if (access.kind === 'service') {
      if (namesServer(route.url)) throw new Error(`${name} names a server but is declared open to anyone`)
      return
    }
    if (!options.kinds.includes(access.kind)) throw new Error(`${name}: this listener does not serve ${access.kind} routes`)
    const hooks = options.hooks(this)
    if (access.kind === 'public') {
      // Its server check is the slug's: a public route names a slug, resolved by admission.
      if (typeof access.slug !== 'function' || !/:slug\b/.test(route.url)) throw new Error(`${name} is a public route without a slug`)
      route.attachValidation = true // counted, then refused (admitPublic)
      route.onRequest = [...hooksOf(route.onRequest), ...(access.stream === true ? [required(hooks.reservePublicStream, 'reservePublicStream', name)] : [])]
      route.preHandler = [required(hooks.admitPublic, 'admitPublic', name), ...hooksOf(route.preHandler)]
      return
    }
    if (namesServer(route.url) && typeof access.server !== 'function') {
      throw new Error(`${name} names a server but its access has no server check (server)`)
    }
    if (access.kind === 'key') {
      route.attachValidation = true // counted, then refused (admit)
      route.onRequest = [...hooksOf(route.onRequest), required(hooks.authenticate, 'authenticate', name),
        ...(access.stream === true ? [required(hooks.reserveStream, 'reserveStream', name)] : [])]
      route.preHandler = [required(hooks.admit, 'admit', name), ...hooksOf(route.preHandler)]
      return
    }
    if (typeof access.scope !== 'string') throw new Error(`${name} is a write route without a scope`)
    route.onRequest = [...hooksOf(route.onRequest), required(hooks.authenticateToken, 'authenticateToken', name)]
    route.preHandler = [required(hooks.checkTokenServer, 'checkTokenServer', name),
      ...(access.idempotent === true ? [required(hooks.idempotency, 'idempotency', name)] : []), ...hooksOf(route.preHandler)]
  }
}

// How requests are validated, on both listeners (buildInstance in app.ts): a body is JSON and is
// checked as sent, a URL's parts are text and are read into their types; no part may carry a
// field its route does not declare.
//
// Bodies get no coercion (`"xp": "10"`, `true` or `1.5` for an integer is a 400, never applied;
// an id sent as a JSON number is refused rather than turned into the lossy string of a double)
// and no unknown field is dropped: it is refused by name. The query string, the path and the
// headers are text, so they keep Fastify's coercion ("limit=5" is the integer 5).
import { AjvCompiler, type Options as AjvOptions } from '@fastify/ajv-compiler'
import type { RouteOptions } from 'fastify'

type Build = ReturnType<typeof AjvCompiler>
type Options = NonNullable<Parameters<Build>[1]>
type Compile = ReturnType<Build>
type Route = Parameters<Compile>[0] & { httpPart?: string, url?: string, method?: string }

/**
 * Shared by both: defaults filled in, the first error only (every error of a large body would be
 * work an attacker chooses), and each error with its schema and value, for the message
 * (schemas/messages.ts).
 */
const COMMON = { useDefaults: true, removeAdditional: false, allErrors: false, verbose: true } as const
const BODY = { ...COMMON, coerceTypes: false } as const
const TEXT = { ...COMMON, coerceTypes: 'array' } as const

interface Schema {
  type?: unknown
  properties?: Record<string, Schema>
  patternProperties?: Record<string, Schema>
  additionalProperties?: unknown
  items?: Schema | Schema[]
  anyOf?: Schema[]
  oneOf?: Schema[]
  allOf?: Schema[]
}

/**
 * The paths of the objects in `schema` that do not say whether they take fields beyond their
 * own (`additionalProperties`): a body schema must close each, or name what else it takes.
 */
export function openObjects (schema: Schema, path = ''): string[] {
  const open: string[] = []
  if (schema.type === 'object' && schema.additionalProperties === undefined) open.push(path === '' ? '/' : path)
  for (const [name, property] of Object.entries(schema.properties ?? {})) open.push(...openObjects(property, `${path}/${name}`))
  for (const [pattern, property] of Object.entries(schema.patternProperties ?? {})) open.push(...openObjects(property, `${path}/${pattern}`))
  if (typeof schema.additionalProperties === 'object' && schema.additionalProperties !== null) {
    open.push(...openObjects(schema.additionalProperties as Schema, `${path}/*`))
  }
  const items = schema.items === undefined ? [] : Array.isArray(schema.items) ? schema.items : [schema.items]
  for (const item of items) open.push(...openObjects(item, `${path}/items`))
  for (const branch of [...schema.anyOf ?? [], ...schema.oneOf ?? [], ...schema.allOf ?? []]) open.push(...openObjects(branch, path))
  return open
}

/**
 * The `schemaController.compilersFactory.buildValidator` of a listener: bodies compiled by one
 * Ajv (no coercion), the query string, path and headers by another. A body schema with an object
 * left open is an error when the app is built, not a route that accepts what it does not read.
 */
export function requestValidators (): Build {
  const bodies = AjvCompiler()
  const text = AjvCompiler()
  return function buildValidator (externalSchemas, options: Options = {}) {
    // The listener's own Ajv options (none today) and plugins, then each part's rules.
    const withRules = (rules: AjvOptions) => ({
      plugins: options.plugins, onCreate: options.onCreate, customOptions: { ...options.customOptions as AjvOptions, ...rules }
    })
    const compileBody = bodies(externalSchemas, withRules(BODY))
    const compileText = text(externalSchemas, withRules(TEXT))
    return function compile (route: Route) {
      if (route.httpPart !== 'body') return compileText(route)
      const open = openObjects(route.schema as Schema)
      if (open.length > 0) {
        throw new Error(`the body schema of ${route.method ?? ''} ${route.url ?? ''} leaves ${open.join(', ')} open: ` +
          'set additionalProperties (false, to refuse unknown fields) on every object')
      }
      return compileBody(route)
    }
  }
}

/** A query string that names no parameter: the route takes none. */
const NO_QUERY = { type: 'object', properties: {} }

/**
 * onRoute: every documented route refuses query parameters it does not declare (`?limt=50` is a
 * 400 naming `limt`, not a default page); hidden routes (documents, pages, files) take what a
 * browser appends.
 */
export function closedQueryString (route: RouteOptions): void {
  const schema = route.schema as (RouteOptions['schema'] & { hide?: boolean }) | undefined
  if (schema === undefined || schema.hide === true) return
  const query = (schema.querystring ?? NO_QUERY) as Schema
  if (query.additionalProperties === undefined) schema.querystring = { ...query, additionalProperties: false }
}

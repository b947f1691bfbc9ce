// Response compression for cached bodies: the encoding a client accepts, and the body in it.
// Bodies under 1 KiB are sent as they are: compression would save next to nothing.
import negotiate from '@fastify/accept-negotiator'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import type { ContentEncoding } from './etag.js'

export const COMPRESSION_THRESHOLD = 1024
const SUPPORTED: ContentEncoding[] = ['br', 'gzip', 'identity']

/** The best encoding for a body of `size` bytes that `acceptEncoding` allows (br before gzip). */
export function chooseEncoding (acceptEncoding: string | undefined, size: number): ContentEncoding {
  if (acceptEncoding === undefined || acceptEncoding === '' || size < COMPRESSION_THRESHOLD) return 'identity'
  return negotiate(acceptEncoding, SUPPORTED) ?? 'identity'
}

/**
 * `body` compressed. zlib writes into output chunks of `chunkSize` bytes (16 KiB unless told),
 * each freed only when V8 next collects: sized to the body, which the compressed form does not
 * outgrow but by a few bytes, a 2 KB body leaves 2 KB to collect rather than 16.
 */
export function encode (body: Buffer, encoding: Exclude<ContentEncoding, 'identity'>): Buffer {
  const chunkSize = Math.max(constants.Z_MIN_CHUNK, Math.min(body.length, constants.Z_DEFAULT_CHUNK))
  if (encoding === 'gzip') return gzipSync(body, { level: 6, chunkSize })
  // Quality 5 is most of brotli's gain at a fraction of its top settings' cost.
  return brotliCompressSync(body, {
    chunkSize,
    params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: body.length }
  })
}

# syntax=docker/dockerfile:1
# Two stages: the build stage carries the TypeScript toolchain (dev dependencies); the runtime
# image carries only production dependencies and the compiled dist/.

FROM node:24-bookworm-slim AS build
WORKDIR /app
# Manifests first (the client workspace's too), so the dependency layer is reused until they
# change; --ignore-scripts: the package's prepare step builds, and the sources come next.
COPY package.json package-lock.json ./
COPY packages/client/package.json ./packages/client/
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY packages/client/tsconfig.json ./packages/client/
COPY scripts ./scripts
COPY src ./src
# tsc, then scripts/copy-lua.js puts the Lua scripts next to the compiled JavaScript.
RUN npm run build

FROM node:24-bookworm-slim AS runtime
# HOST=0.0.0.0: the server's default (127.0.0.1) would be unreachable from outside the container.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
# V8's young generation as `npm start` sizes it (docs/operating.md, "Memory"); compose's command inherits it.
ENV NODE_OPTIONS=--max-semi-space-size=8
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/client/package.json ./packages/client/
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
# Files stay owned by root, so the process cannot rewrite its own code.
USER node
EXPOSE 3000
# The slim image has no curl or wget; Node's built-in fetch does the probe.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node directly, not `npm start`: its prestart hook may rebuild, which needs the dev dependencies
# this image leaves out. As PID 1, node gets SIGTERM from `docker stop` and closes gracefully.
CMD ["node", "dist/server.js"]

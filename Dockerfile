# The metalsynth image the webhook Deployment runs (deploy/metalsynth.yaml names metalsynth:<version>):
#   docker build -t metalsynth:0.1.0 .
# The CLI runs its TypeScript sources through tsx (a runtime dependency), so there is no compile step:
# the build stage installs production dependencies only, the runtime stage is distroless and non-root.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
# esbuild (used by tsx) installs its binary for the build platform, which is the runtime's too.
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY charts ./charts
COPY gitops ./gitops
COPY synth ./synth
COPY webhook ./webhook

FROM gcr.io/distroless/nodejs20-debian12:nonroot
WORKDIR /app
# Owned by root: the non-root user only reads the application.
COPY --from=build /app /app
ENV NODE_ENV=production
# tsx keeps its compile cache in the temporary directory; the Deployment mounts an emptyDir there,
# since the root file system is read-only.
ENV TMPDIR=/tmp
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["/nodejs/bin/node", "/app/bin/metalsynth.js"]
CMD ["webhook", "--from-cluster", "--tls-cert", "/tls/tls.crt", "--tls-key", "/tls/tls.key"]

# The metalsynth image the webhook Deployment runs (deploy/metalsynth.yaml names metalsynth:<version>):
#   docker build -t metalsynth:0.1.0 .
# The build stage compiles the TypeScript sources into dist/ (`npm run build`), then drops the
# development dependencies; the runtime stage gets the compiled JavaScript and the production
# dependencies only, and is distroless and non-root.

FROM node:20-bookworm-slim AS build
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
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM gcr.io/distroless/nodejs20-debian12:nonroot
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

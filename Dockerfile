# The image the karpctl-doctor chart runs (charts/karpctl-doctor): karpctl built from this repository
# on the official Node.js 20 image. Build: docker build -t <registry>/karpctl:<version> .
# Two stages: the build needs the dev dependencies (esbuild, oclif); the image keeps only what runs.

FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# The build runs after the sources are in (npm ci's `prepare` would build an empty tree).
RUN npm ci --ignore-scripts
COPY tsconfig.json ./
COPY bin ./bin
COPY scripts ./scripts
COPY schema ./schema
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/bin ./bin
COPY --from=build /src/dist ./dist
COPY --from=build /src/oclif.manifest.json ./
COPY --from=build /src/schema ./schema
# The official image's unprivileged user (uid 1000), as the chart's securityContext expects.
USER node
EXPOSE 9464
ENTRYPOINT ["node", "/app/bin/run.js"]
CMD ["doctor", "--help"]

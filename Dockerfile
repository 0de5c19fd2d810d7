# The daemon's image: Node.js 20 running the TypeScript sources through tsx, as `npm start` does.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY controllers ./controllers
USER node
EXPOSE 10257
ENTRYPOINT ["node", "bin/orch-controller-manager.js"]

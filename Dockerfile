# The daemon's image: Node.js 20 running the TypeScript sources from their bundle, as `npm start` does (bin/launch.js).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY controllers ./controllers
# The bundle and its code cache, built here: at run time node_modules is not the node user's to write.
RUN node bin/orch-controller-manager.js --help > /dev/null
USER node
EXPOSE 10257
ENTRYPOINT ["node", "bin/orch-controller-manager.js"]

# One image for every Proofline process; docker-compose picks the entry per service.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production NX_DAEMON=false NX_NO_CLOUD=true
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.base.json tsconfig.json nx.json ./
COPY apps ./apps
COPY libs ./libs
USER node
EXPOSE 3000 4000
CMD ["npm", "run", "start:api"]

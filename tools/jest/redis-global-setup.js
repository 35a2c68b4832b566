// Starts a private Redis for the whole jest run, so tests never touch a shared Redis (nothing is
// FLUSHed, nothing collides). PROOFLINE_TEST_REDIS picks its topology: `standalone` (default),
// `cluster1` (a one-node Redis Cluster) or `cluster3` (three masters). If PROOFLINE_TEST_REDIS_URL
// is already set (an outer runner, or a Redis the developer chose), that one is used and nothing
// is started.
const { startRedis } = require('./redis-servers');

module.exports = async function globalSetup() {
  if (process.env.PROOFLINE_TEST_REDIS_URL) return;
  const started = await startRedis(process.env.PROOFLINE_TEST_REDIS || 'standalone');
  process.env.PROOFLINE_TEST_REDIS_URL = started.url;
  process.env.PROOFLINE_TEST_REDIS_NODES = started.nodes.join(',');
  process.env.PROOFLINE_TEST_REDIS_TOPOLOGY = started.topology;
  globalThis.__PROOFLINE_REDIS__ = started;
};

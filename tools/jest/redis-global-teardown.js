module.exports = async function globalTeardown() {
  const started = globalThis.__PROOFLINE_REDIS__;
  if (!started) return;
  globalThis.__PROOFLINE_REDIS__ = undefined;
  await started.stop();
};

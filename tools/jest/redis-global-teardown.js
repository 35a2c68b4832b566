const fs = require('node:fs');

module.exports = async function globalTeardown() {
  const started = globalThis.__PROOFLINE_REDIS__;
  if (!started) return;
  globalThis.__PROOFLINE_REDIS__ = undefined;
  await new Promise((resolve) => {
    started.child.once('exit', resolve);
    started.child.kill('SIGTERM');
    setTimeout(resolve, 3000).unref();
  });
  fs.rmSync(started.dir, { recursive: true, force: true });
};

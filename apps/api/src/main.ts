import { loadConfigOrExit, systemClock } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { createApp } from './app';
import { composeApi } from './compose';
import { listen } from './server';

async function main(): Promise<void> {
  const config = loadConfigOrExit('api');
  const logger = createLogger({ level: config.logLevel, name: 'api' });
  const composed = await composeApi(config, logger, systemClock);
  const running = await listen(createApp(composed.deps), config.host, config.port, logger);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    await running.close(config.shutdownGraceMs);
    await composed.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(`proofline api: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

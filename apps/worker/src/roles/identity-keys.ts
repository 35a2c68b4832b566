import { startIdentityKeyWorker } from '@proofline/identity-feature';
import type { RoleStarter } from '../context';

/** The key worker: creates identity keys atomically under the per-tenant limit. */
export const identityKeysRole: RoleStarter = async (ctx) => {
  const running = await startIdentityKeyWorker({
    config: ctx.config,
    logger: ctx.logger,
    connections: { redis: ctx.redis, bull: ctx.bull },
  });
  return { name: 'identity-keys', close: () => running.close() };
};

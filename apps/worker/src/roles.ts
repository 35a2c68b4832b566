import type { RoleStarter } from './context';
import { arcCallbacksRole } from './roles/arc-callbacks';
import { chainConfirmationsRole } from './roles/chain';
import { identityKeysRole } from './roles/identity-keys';
import { recordsPublishRole } from './roles/records';
import { walletRole } from './roles/wallet';
import { webhooksRole } from './roles/webhooks';

/** Every worker role this process runs. Features register their starters here. */
export const ROLES: readonly RoleStarter[] = [
  identityKeysRole,
  recordsPublishRole,
  chainConfirmationsRole,
  arcCallbacksRole,
  walletRole,
  webhooksRole,
];

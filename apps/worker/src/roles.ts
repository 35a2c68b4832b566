import type { RoleStarter } from './context';
import { chainBlocksRole } from './roles/chain';
import { identityKeysRole } from './roles/identity-keys';
import { recordsPublishRole } from './roles/records';

/** Every worker role this process runs. Features register their starters here. */
export const ROLES: readonly RoleStarter[] = [identityKeysRole, recordsPublishRole, chainBlocksRole];

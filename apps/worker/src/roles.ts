import type { RoleStarter } from './context';
import { identityKeysRole } from './roles/identity-keys';

/** Every worker role this process runs. Features register their starters here. */
export const ROLES: readonly RoleStarter[] = [identityKeysRole];

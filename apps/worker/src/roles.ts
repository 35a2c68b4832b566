import type { RoleStarter } from './context';

/** Every worker role this process runs. Features register their starters here. */
export const ROLES: readonly RoleStarter[] = [];

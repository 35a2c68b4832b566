import { KEY_ADMIN_PERMISSIONS, PERMISSIONS } from '@proofline/identity-domain';
import type { IdentityApiKey, Principal } from '@proofline/identity-domain';
import { callerKey } from '@proofline/identity-feature';
import type { Usage } from '@proofline/identity-feature';
import type { Builder } from './builder';

interface MeShape {
  readonly principal: Principal;
  readonly key: IdentityApiKey;
}

export function addKeyTypes(builder: Builder) {
  const Permission = builder.enumType('Permission', { values: PERMISSIONS });
  const KeySource = builder.enumType('KeySource', {
    values: {
      IDENTITY: { value: 'identity' },
      LEGACY: { value: 'legacy', description: 'Imported from the legacy key system.' },
    } as const,
  });

  const ApiKey = builder.objectRef<IdentityApiKey>('ApiKey').implement({
    description: 'An identity API key (the REST resource without rawKey, which is never readable).',
    fields: (t) => ({
      id: t.exposeString('id'),
      name: t.exposeString('name'),
      keyMask: t.exposeString('keyMask'),
      permissions: t.field({ type: [Permission], resolve: (k) => k.permissions }),
      expiresAt: t.exposeString('expiresAt'),
      revokedAt: t.exposeString('revokedAt', { nullable: true }),
      createdBy: t.exposeString('createdBy'),
      createdAt: t.exposeString('createdAt'),
      updatedAt: t.exposeString('updatedAt'),
    }),
  });

  const ApiKeyUsage = builder.objectRef<Usage>('ApiKeyUsage').implement({
    fields: (t) => ({
      used: t.exposeInt('used', {
        description: 'Identity keys plus remaining legacy keys of the tenant, revoked and expired included.',
      }),
      limit: t.exposeInt('limit'),
    }),
  });

  const Me = builder.objectRef<MeShape>('Me').implement({
    description: 'The calling key.',
    fields: (t) => ({
      tenant: t.string({ resolve: (m) => m.principal.tenant }),
      source: t.field({ type: KeySource, resolve: (m) => m.principal.source }),
      permissions: t.field({ type: [Permission], resolve: (m) => [...m.principal.permissions] }),
      key: t.field({ type: ApiKey, resolve: (m) => m.key }),
    }),
  });

  builder.queryFields((t) => ({
    apiKeys: t.field({
      type: [ApiKey],
      nullable: true,
      description:
        "The tenant's keys (identity and legacy), newest first. Needs Issuer_Admin or Verifier_Admin, as REST.",
      resolve: async (_root, _args, ctx) => ctx.deps.identity.keys.listKeys(await ctx.caller(...KEY_ADMIN_PERMISSIONS)),
    }),
    apiKeyUsage: t.field({
      type: ApiKeyUsage,
      nullable: true,
      description: 'Keys used and the shared limit. Needs Issuer_Admin or Verifier_Admin, as REST.',
      resolve: async (_root, _args, ctx) => ctx.deps.identity.keys.usage(await ctx.caller(...KEY_ADMIN_PERMISSIONS)),
    }),
    me: t.field({
      type: Me,
      nullable: true,
      description: 'The calling key (masked, never its raw value). Any valid key.',
      resolve: async (_root, _args, ctx) => {
        const principal = await ctx.caller();
        return { principal, key: await callerKey(ctx.deps.identity.keys, principal) };
      },
    }),
  }));
}

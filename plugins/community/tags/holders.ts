import { NotAcceptable, type RegisterContext } from '@gatehouse/core';

/**
 * Public keys and firewall rules hold tags in their filters, so the namespace-wide tag calls reach them too
 * (`GET /api/tags` lists their tags; `PUT` / `DELETE /api/tags/{tag}` change them in the devices' transaction).
 */
export function registerTagHolders(ctx: RegisterContext): void {
  const holders = () => [ctx.resolve('publicKeys').tagFilters, ctx.resolve('firewall').tagFilters];
  ctx.hooks.on('tags.collect', async ({ tenant, tags }) => {
    for (const h of holders()) await h.collect(tenant, tags);
  });
  ctx.hooks.on('tags.renamed', async ({ tenant, from, to }) => {
    for (const h of holders()) await h.rename(tenant, from, to);
  });
  ctx.hooks.on('tags.deleted', async ({ tenant, tag }) => {
    // All refusals in one answer, before anything changes: an empty filter must not become "every device".
    const sole: string[] = [];
    for (const h of holders()) sole.push(...(await h.soleHolders(tenant, tag)));
    if (sole.length > 0) {
      throw new NotAcceptable(
        `tag ${tag} is the only tag of the filter of ${sole.join(', ')}; give ${sole.length > 1 ? 'them' : 'it'} ` +
          'another tag or a hostname filter, or delete it, first',
      );
    }
    for (const h of holders()) await h.remove(tenant, tag);
  });
}

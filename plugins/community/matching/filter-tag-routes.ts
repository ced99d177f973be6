import { type AuthKind, type Cradle, defineRoute, type RouteDef } from '@gatehouse/core';
import type { TObject, TSchema, TString } from '@sinclair/typebox';
import { tagBody, tagsBody } from './schemas';

/** What holds a device filter whose tags the sub-resource changes: each call answers the holder as it is after. */
export interface FilterTags {
  addTag(id: string, tag: string): Promise<unknown>;
  setTags(id: string, tags: string[]): Promise<unknown>;
  removeTag(id: string, tag: string): Promise<unknown>;
}

/**
 * The tag sub-resource of something that reaches devices by a filter (a firewall rule, a public key): add a tag,
 * replace the tags, remove a tag named in the path (and, where `removeInBody` is set, one named in the body).
 * Administrators only, as changing the filter is. The summaries name the holder (`noun`); the descriptions are the
 * holder's own.
 */
export function filterTagRoutes<K extends string>(o: {
  /** The holder's own path, e.g. `/api/firewall/rules/:id`. */
  path: string;
  /** The holder's path parameter. */
  key: K;
  params: TObject<Record<K, TString>>;
  tagParams: TObject<Record<K | 'tag', TString>>;
  /** The holder as the API answers it. */
  answer: TSchema;
  noun: string;
  tags: string[];
  holder: (services: Cradle) => FilterTags;
  /** Also `DELETE <path>/tags` with the tag in the body. */
  removeInBody?: boolean;
  descriptions: { add?: string; set?: string; removeInBody?: string; removeInPath?: string };
}): RouteDef[] {
  const auth: AuthKind[] = ['user', 'apiKey'];
  const base = { auth, role: 'administrator' as const, tags: o.tags };
  const response = { 200: o.answer };
  // The params schemas require the key and the tag (validated before a handler runs).
  const named = (params: unknown, name: string) => (params as Record<string, string>)[name] as string;
  const text = (summary: string, description: string | undefined) => ({
    summary,
    ...(description ? { description } : {}),
  });
  const routes: RouteDef[] = [
    defineRoute({
      ...base,
      method: 'POST',
      path: `${o.path}/tags`,
      ...text(`Add a tag to the ${o.noun} filter`, o.descriptions.add),
      schema: { params: o.params, body: tagBody, response },
      handler: ({ params, body, services }) => o.holder(services).addTag(named(params, o.key), body.tag),
    }),
    defineRoute({
      ...base,
      method: 'PUT',
      path: `${o.path}/tags`,
      ...text(`Replace the tags of the ${o.noun} filter`, o.descriptions.set),
      schema: { params: o.params, body: tagsBody, response },
      handler: ({ params, body, services }) => o.holder(services).setTags(named(params, o.key), body.tags),
    }),
  ];
  if (o.removeInBody) {
    routes.push(
      defineRoute({
        ...base,
        method: 'DELETE',
        path: `${o.path}/tags`,
        ...text(`Remove a tag (named in the body) from the ${o.noun} filter`, o.descriptions.removeInBody),
        schema: { params: o.params, body: tagBody, response },
        handler: ({ params, body, services }) => o.holder(services).removeTag(named(params, o.key), body.tag),
      }),
    );
  }
  routes.push(
    defineRoute({
      ...base,
      method: 'DELETE',
      path: `${o.path}/tags/:tag`,
      ...text(
        o.removeInBody
          ? `Remove a tag (named in the path) from the ${o.noun} filter`
          : `Remove a tag from the ${o.noun} filter`,
        o.descriptions.removeInPath,
      ),
      schema: { params: o.tagParams, response },
      handler: ({ params, services }) =>
        o.holder(services).removeTag(named(params, o.key), named(params, 'tag')),
    }),
  );
  return routes;
}

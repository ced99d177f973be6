import type { Knex } from 'knex';
import type { Role } from './auth/roles';
import type { TenantStore } from './store/tenant';

/**
 * Typed extension points owned by core (see docs/content/developers/architecture.md): the events of the product that a plugin may handle
 * with `ctx.hooks.on(name, handler)` in its `register`. Handlers run in registration order (plugin list order);
 * a handler that throws stops the chain and its error reaches the caller (an `HttpError` becomes the answer: cloud
 * billing answers 402 from `device.beforeAccept` this way). A plugin may declare events of its own by augmenting
 * `HookMap`:
 *
 * ```ts
 * declare module '@gatehouse/core/hooks' {
 *   interface HookMap { 'greeting.sent': { tenantId: string; text: string } }
 * }
 * ```
 */
export interface HookMap {
  /**
   * `gatehouse serve` is listening (not run for a kernel a test or a CLI command starts). `notice` prints a block
   * of text on the operator's terminal (the community plugin prints the link that creates the first user).
   */
  'serve.ready': { notice(text: string): void };
  /** Before a device (or container) is accepted; a handler that throws (cloud billing: 402) stops the acceptance. */
  'device.beforeAccept': { tenantId: string; uid: string };
  /** After a device was accepted (cloud billing reports the usage to the payment provider). */
  'device.accepted': { tenantId: string; uid: string };
  /**
   * Before a connection to an accepted device goes on (SSH, the web terminal and HTTP tunnels). A handler that
   * throws a 4xx error refuses it, and its message is what the user reads (cloud billing: a namespace whose
   * subscription lapsed keeps only its chosen devices reachable).
   */
  'device.beforeConnect': { tenantId: string; uid: string };
  /**
   * Before a member is added to a namespace. Community adds the member at once (`status` stays `accepted`); an
   * edition that confirms invites by e-mail sets `status` to `pending` and sends its message.
   * A handler that throws refuses the addition.
   */
  'member.invite': MemberInvite;
  /** Runs inside the deleting transaction before a namespace and everything in it go (cloud reports billing). */
  'namespace.beforeDelete': { tenantId: string; trx: Knex.Transaction };
  /**
   * A namespace is answered (the Namespace entity's `billing`): an edition that bills fills in the namespace's
   * customer and subscription; without one it stays null.
   */
  'namespace.view': { tenantId: string; billing: NamespaceBilling | null };
  /** `GET /api/stats`: features fill in their counts (sessions: `active_sessions`). */
  'stats.collect': { tenantId: string; stats: { active_sessions: number } };
  /**
   * Tags live on devices, public keys and firewall rules. `GET /api/tags` lets each owner add its tags to the
   * set; renames and deletions across the namespace reach each owner through `tags.renamed` / `tags.deleted`.
   * Every handler queries through `tenant` (its `query(Model)` is bound to the namespace and, inside a rename or
   * delete, runs in the transaction that also changes the devices; `db` is that same connection): the embedded
   * store has one connection, so a query on the pool there would wait forever. A handler that throws undoes the
   * whole rename or delete.
   */
  'tags.collect': { tenantId: string; tags: Set<string>; db: Knex; tenant: TenantStore };
  'tags.renamed': { tenantId: string; from: string; to: string; db: Knex.Transaction; tenant: TenantStore };
  'tags.deleted': { tenantId: string; tag: string; db: Knex.Transaction; tenant: TenantStore };
}

/** A namespace's billing as the Namespace entity carries it: the customer, and the subscription when one exists. */
export interface NamespaceBilling {
  customer_id: string;
  subscription?: { id: string; status: string; current_period_end: number };
  created_at?: string;
  updated_at?: string;
}
/** What `member.invite` handlers see (and may change: `status`, `expiresAt`). */
export interface MemberInvite {
  tenantId: string;
  /** The namespace's name. */
  namespace: string;
  /** The id of the user who adds the member. */
  invitedBy: string;
  userId: string;
  email: string;
  role: Role;
  status: 'accepted' | 'pending';
  /** Set by a handler that makes the invite expire (cloud: 7 days). */
  expiresAt?: Date;
  /** Set by a handler that mails the invitee a link to accept (cloud). */
  link?: string;
}

type Handler<P> = (payload: P) => Promise<void> | void;

export class Hooks {
  private readonly handlers = new Map<string, Handler<never>[]>();

  on<K extends keyof HookMap>(name: K, handler: Handler<HookMap[K]>): void {
    const list = this.handlers.get(name as string) ?? [];
    list.push(handler as Handler<never>);
    this.handlers.set(name as string, list);
  }

  has<K extends keyof HookMap>(name: K): boolean {
    return (this.handlers.get(name as string)?.length ?? 0) > 0;
  }

  async run<K extends keyof HookMap>(name: K, payload: HookMap[K]): Promise<void> {
    for (const handler of this.handlers.get(name as string) ?? []) {
      await (handler as Handler<HookMap[K]>)(payload);
    }
  }
}

/**
 * Typed extension points owned by core. A plugin declares the payload of its hooks by augmenting `HookMap`:
 *
 * ```ts
 * declare module '@gatehouse/core/hooks' {
 *   interface HookMap { 'device.beforeAccept': { tenantId: string; uid: string } }
 * }
 * ```
 * Handlers run in registration order (plugin load order); a handler that throws stops the chain and the error
 * reaches the caller (cloud billing answers 402 from `device.beforeAccept` this way).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in plugins
export interface HookMap {}

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

import type { ProcessWorld } from './world';

/**
 * Waits until no session of the world is open any more (the journal has flushed and closed it), at most 5 s: a
 * recorded run's last writes to the store then fall within that run, not into the next one.
 */
export async function settled(world: ProcessWorld): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const res = await world.api('GET', '/api/sessions?per_page=5');
    const list = (Array.isArray(res.body) ? res.body : []) as { active?: boolean }[];
    if (!list.some((s) => s.active)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

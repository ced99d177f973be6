/** Longest console path a sign-in carries back (it travels in RelayState, which IdPs keep to 80 bytes or more). */
export const RETURN_PATH_MAX = 512;

/**
 * The console path a sign-in returns to, or undefined when `value` is not one: it starts with a single `/`, holds
 * no `//`, backslash, fragment, whitespace or control character, and so can only name a page of this server's
 * console (never another host: `//host`, `/\host` and `https:` are what an open redirect needs).
 */
export function consolePath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > RETURN_PATH_MAX) return undefined;
  if (!value.startsWith('/') || value.includes('//') || value.includes('\\') || value.includes('#')) {
    return undefined;
  }
  // Printable ASCII only: browsers drop tabs and newlines from addresses, which would join `/` and `/host` again.
  if (!/^[\x21-\x7e]*$/.test(value)) return undefined;
  // The API is no page to land on, and an assertion code must not reach its logs.
  if (value === '/api' || value.startsWith('/api/') || value.startsWith('/api?')) return undefined;
  return value;
}

import '@fontsource/jetbrains-mono/400.css';
import '@fontsource/jetbrains-mono/700.css';

/**
 * The terminal's font is bundled with the console, not picked from whatever the system has: xterm measures the cell
 * from the font it is given, and with a system fallback (e.g. DejaVu Sans Mono at 14 px) the underscore is drawn
 * below the measured cell and clipped, so `x86_64` read as "x86 64". JetBrains Mono's glyphs sit inside its line box.
 */
export const TERMINAL_FONT = '"JetBrains Mono", monospace';

/**
 * Resolves once both weights are loaded (or failed), so xterm measures the bundled font and not a fallback that
 * is swapped out later (which would leave the cell size, and the rows that fit, wrong).
 */
export async function loadTerminalFont(size: number): Promise<void> {
  if (!('fonts' in document)) return;
  await Promise.all([
    document.fonts.load(`${size}px "JetBrains Mono"`),
    document.fonts.load(`bold ${size}px "JetBrains Mono"`),
  ]).catch(() => undefined);
}

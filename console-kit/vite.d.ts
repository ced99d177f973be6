import type { UserConfig } from 'vite';

/** A Vite config building a plugin's console module from `entry` into `outDir` (absolute paths). */
export declare function consoleModule(options: { entry: string; outDir: string }): UserConfig;

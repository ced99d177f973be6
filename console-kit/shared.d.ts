/** The module names the console's import map provides to plugin modules. */
export declare const sharedModules: readonly string[];

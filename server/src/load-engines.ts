import type * as EnginesModule from './engines.ts';

export type Engines = typeof EnginesModule;

/** The tool handlers' engines, loaded on first use (see engines.ts). */
export const loadEngines = (): Promise<Engines> => import('./engines.ts');

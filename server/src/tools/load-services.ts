import type * as ServicesModule from './services.ts';

export type Services = typeof ServicesModule;

/** The tool handlers' services, loaded on first use (see services.ts). */
export const loadServices = (): Promise<Services> => import('./services.ts');

/** Replaced at build time from package.json; the fallback serves unbundled test runs. */
declare const __DELEGATE_VERSION__: string | undefined;

export const VERSION: string =
  typeof __DELEGATE_VERSION__ === 'string' ? __DELEGATE_VERSION__ : '0.0.0-dev';

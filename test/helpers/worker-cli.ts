// The pinned Codex / Gemini CLIs for the CLI-engine tests, installed into .cache/ on first use.
interface Installer {
  ensureWorkerCli(name: 'codex' | 'gemini'): Promise<string>;
}

const INSTALLER_URL = new URL('../../scripts/install-worker-cli.mjs', import.meta.url).href;

export async function workerCliBinary(name: 'codex' | 'gemini'): Promise<string> {
  const installer = (await import(INSTALLER_URL)) as Installer;
  return installer.ensureWorkerCli(name);
}

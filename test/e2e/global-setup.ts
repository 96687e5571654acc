import { claudeBinary } from '../helpers/claude-cli.ts';

/** Installs the pinned Claude Code CLI once, before any e2e test (a cached no-op after that). */
export default async function setup(): Promise<void> {
  await claudeBinary();
}

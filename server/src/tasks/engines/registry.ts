import type { CliFormat } from '../../config/schema.ts';
import type { CliEngine } from './cli-engine.ts';
import { claudeCliEngine } from './claude-cli.ts';
import { codexCliEngine } from './codex-cli.ts';
import { geminiCliEngine } from './gemini-cli.ts';

const ENGINES: Record<CliFormat, CliEngine> = {
  'claude-cli': claudeCliEngine,
  'codex-cli': codexCliEngine,
  'gemini-cli': geminiCliEngine,
};

/** The CLI engine of a CLI profile format. */
export function cliEngineFor(format: CliFormat): CliEngine {
  return ENGINES[format];
}

export type { CliEngine, CliFailureKind } from './cli-engine.ts';
export { cliEndpointHosts } from './cli-sandbox.ts';
export { cliEngineFor } from './registry.ts';
export { findBinary } from './find-binary.ts';
export { runCliTask, CliTaskError } from './run-cli-task.ts';

export type { CliEngine, CliFailureKind } from './cli-engine.ts';
export { cliEndpointHosts } from './cli-sandbox.ts';
export { cliEngineFor, taskEngineFor } from './registry.ts';
export { findBinary } from './find-binary.ts';
export type { TaskEngine } from './task-engine.ts';

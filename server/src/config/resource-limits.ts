/**
 * What one sandboxed command may use. The process count holds per command (each runs in a user
 * namespace of its own, so only its own processes and threads count); memory holds per process
 * (its data segment: heap and private writable mappings).
 */
export interface ResourceLimits {
  processes: number;
  memoryMb: number;
}

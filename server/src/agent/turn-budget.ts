/**
 * Model turns a task may take when nobody said how many. Cloud turns cost money and cloud
 * models do more per turn (parallel calls, larger edits), so 40 suffices for a bounded task.
 * Local turns cost only time, and local models take smaller steps (narrower reads to fit small
 * contexts, re-reads after eviction, retries after a malformed tool call), so they get twice
 * as many; the task's hard timeout still bounds the wall time. Past the cap a run is no longer
 * a bounded task — most likely a loop — so every budget, explicit ones included, stops there.
 */
export const TURN_BUDGET = { cloud: 40, local: 80, cap: 150 } as const;

/** The task's turn budget: the one asked for (task, then agent definition), else by profile; never above the cap. */
export function turnBudget(requested: number | undefined, profile: { local?: boolean }): number {
  const turns = requested ?? (profile.local === true ? TURN_BUDGET.local : TURN_BUDGET.cloud);
  return Math.max(1, Math.min(Math.floor(turns), TURN_BUDGET.cap));
}

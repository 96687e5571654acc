import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);
import{ensureResult,finishTask}from"./chunk-HTPHTVRK.mjs";import"./chunk-PQUHIEUC.mjs";import"./chunk-22JIFJO5.mjs";export{ensureResult,finishTask};

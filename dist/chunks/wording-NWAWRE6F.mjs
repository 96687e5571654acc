import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);
import{CLI_WORDING,TOOL_WORDING,inCliWords}from"./chunk-6EYCB37D.mjs";import"./chunk-5J7RWOGQ.mjs";export{CLI_WORDING,TOOL_WORDING,inCliWords};

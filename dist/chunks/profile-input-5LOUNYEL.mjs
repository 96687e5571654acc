import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);
import{formatProfileIssues,profilePatch,toCamel,toSnake}from"./chunk-E2TIZQNY.mjs";import"./chunk-A4WE44GE.mjs";import"./chunk-5J7RWOGQ.mjs";export{formatProfileIssues,profilePatch,toCamel,toSnake};

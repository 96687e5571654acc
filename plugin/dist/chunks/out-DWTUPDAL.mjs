import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);
import{require_out}from"./chunk-UAR4ZGXX.mjs";import"./chunk-5J7RWOGQ.mjs";export default require_out();

import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);
var fingerprintOfStats=stats=>`${stats.ino}:${stats.mtimeNs}`;export{fingerprintOfStats};

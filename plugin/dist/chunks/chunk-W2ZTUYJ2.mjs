import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);
function plural(count,noun,nouns=`${noun}s`){return`${groupDigits(count)} ${count===1?noun:nouns}`}function groupDigits(count){return String(count).replace(/\B(?=(\d{3})+(?!\d))/g,",")}export{plural};

import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);
function groupBy(items,keyOf){let groups=new Map;for(let item of items){let key=keyOf(item),group=groups.get(key);group?group.push(item):groups.set(key,[item])}return groups}export{groupBy};

import type { ApiRoute } from './openapi/routes';

/**
 * The route pattern a request matched (`/v1/keys/{id}`), for metric labels and span names:
 * never a raw path with ids in it. Matched as Express matches (case-insensitive, one trailing
 * slash allowed); anything else is `unmatched`, so the label set stays bounded.
 */
export function routePatterns(routes: readonly ApiRoute[]): (method: string, path: string) => string {
  const compiled = routes.map((route) => ({
    method: route.method.toUpperCase(),
    pattern: route.path,
    regexp: new RegExp(`^${route.path.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}/?$`, 'i'),
  }));
  return (method, path) => {
    const wanted = method === 'HEAD' ? 'GET' : method;
    for (const route of compiled) if (route.method === wanted && route.regexp.test(path)) return route.pattern;
    return 'unmatched';
  };
}

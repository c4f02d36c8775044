/**
 * `node -r ./test/support/swc-register.js file.ts` runs TypeScript outside jest (forked test
 * children, the billing bench): each required `.ts` file is compiled by @swc/core with the
 * same options as jest.config.js (decorator metadata included, which MikroORM needs).
 */
const { readFileSync } = require('node:fs');
const { transformSync } = require('@swc/core');

const options = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

require.extensions['.ts'] = function compileTypeScript(module, filename) {
  const { code } = transformSync(readFileSync(filename, 'utf8'), { ...options, filename });
  module._compile(code, filename);
};

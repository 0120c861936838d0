// eslint.config.mjs: ESLint over the dashboard's own JavaScript (`make lint-js`, part of
// `make lint`): src/sumlens/board/static/ (its third-party vendor/ aside) and the snapshot's
// script. ESLint and its packages are the devDependencies of package.json, installed by the
// Makefile into .lint/npm/ (not node_modules/ here), so they are loaded from there.
//
// Besides ESLint's recommended rules, a few that catch real bugs: an unused variable or
// argument (after the last one used), == where === was meant (null checks aside), a
// variable shadowing one of an outer scope, and let where nothing reassigns it. Only core/
// talks HTTP: anywhere else a raw fetch would bypass core/api.js (its base URL under a
// prefix, its error messages), so it fails here.

import { createRequire } from 'node:module';

const require = createRequire(new URL('./.lint/npm/', import.meta.url));
const js = require('@eslint/js');
const globals = require('globals');

const STATIC = 'src/sumlens/board/static';
const NO_FETCH = 'Talk HTTP through core/api.js (getJSON, sendJSON, ...), not fetch.';

export default [
  { ignores: [`${STATIC}/vendor/`] },
  js.configs.recommended,
  {
    files: [`${STATIC}/**/*.js`, 'src/sumlens/board/snapshot/snapshot.js'],
    languageOptions: {
      ecmaVersion: 'latest',
      sourceType: 'module',
      globals: { ...globals.browser },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'no-unused-vars': ['error', { args: 'after-used' }],
      eqeqeq: ['error', 'smart'],
      'no-shadow': 'error',
      'prefer-const': 'error',
    },
  },
  {
    files: [`${STATIC}/graph/graph_worker.js`],
    languageOptions: { globals: { ...globals.worker } },
  },
  {
    files: [`${STATIC}/**/*.js`],
    ignores: [`${STATIC}/core/**`],
    rules: {
      'no-restricted-globals': ['error', { name: 'fetch', message: NO_FETCH }],
      'no-restricted-properties': [
        'error',
        ...['window', 'globalThis', 'self'].map((object) => ({
          object,
          property: 'fetch',
          message: NO_FETCH,
        })),
      ],
    },
  },
];

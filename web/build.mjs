// Bundles the studio page with esbuild: src/main.js (three.js, CodeMirror and
// our modules) into one studio.js, plus index.html and studio.css, into --out.
// Run by CMake (cmake/ProcgenStudio.cmake) with the build tree's node_modules.
import { createRequire } from 'node:module';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, arg, i, all) => (arg.startsWith('--') ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []));
const here = dirname(fileURLToPath(import.meta.url));
const modules = args.modules ?? join(here, 'node_modules');
const out = args.out ?? join(here, 'dist');
const esbuild = createRequire(join(modules, '/'))('esbuild');

mkdirSync(out, { recursive: true });
await esbuild.build({
  entryPoints: [join(here, 'src', 'main.js')],
  bundle: true,
  minify: true,
  sourcemap: false,
  format: 'esm',
  target: ['chrome110', 'firefox115', 'safari16'],
  nodePaths: [modules],
  outfile: join(out, 'studio.js'),
  logLevel: 'warning',
  legalComments: 'none',
});
copyFileSync(join(here, 'src', 'index.html'), join(out, 'index.html'));
copyFileSync(join(here, 'src', 'studio.css'), join(out, 'studio.css'));

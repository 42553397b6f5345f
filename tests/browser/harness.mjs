// Shared setup of the browser tests (issue 20): starts `procgen serve` on a
// free port, drives Debian's chromium with playwright-core (headless, no
// browser download), saves screenshots and reports measurements.
//
// Environment (set by tests/CMakeLists.txt): PROCGEN_CLI, PROCGEN_WEB_MODULES
// (the build tree's node_modules), PROCGEN_CHROMIUM, PROCGEN_SCREENSHOTS.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';

const env = process.env;
const require = createRequire(join(env.PROCGEN_WEB_MODULES ?? '.', '/'));
const { chromium } = require('playwright-core');

/** Starts `procgen serve --port 0` (extra args appended); resolves when it prints its address. */
export function startServer(extraArgs = []) {
  const proc = spawn(env.PROCGEN_CLI, ['serve', '--port', '0', '--quiet', ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error('procgen serve did not start: ' + stderr)), 15000);
    proc.stdout.on('data', (d) => {
      stdout += d;
      const m = /procgen studio: (http:\/\/\S+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1],
          proc,
          stderr: () => stderr,
          async stop() {
            if (proc.exitCode !== null) return proc.exitCode;
            proc.kill('SIGTERM');
            return new Promise((r) => proc.once('exit', (code) => r(code)));
          },
        });
      }
    });
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`procgen serve exited (${code}): ${stderr}`)); });
  });
}

/** Headless chromium with the flags this closed-network machine needs; WebGL through SwiftShader. */
export function launchBrowser() {
  return chromium.launch({
    executablePath: env.PROCGEN_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
      '--disable-quic', '--disable-dev-shm-usage'],
  });
}

/**
 * Starts a server and a browser and opens the studio on `tab` (#lsystem, …).
 * The page's uncaught errors and console errors (other than 4xx replies and
 * aborted requests) are collected in `problems` so a test can assert there were none.
 */
export async function openStudio(tab = 'lsystem', { viewport = { width: 1280, height: 800 }, serverArgs = [] } = {}) {
  const server = await startServer(serverArgs);
  const browser = await launchBrowser();
  const page = await browser.newPage({ viewport });
  const problems = [];
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  // Chromium logs every 4xx reply as a console error; the tests provoke those
  // on purpose and check the status and the page's message themselves.
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 4\d\d|aborted/i.test(m.text())) problems.push('console: ' + m.text());
  });
  await page.goto(`${server.url}#${tab}`);
  await page.getByTestId(`pane-${tab}`).waitFor();
  return {
    server, browser, page, problems,
    async close() {
      await browser.close();
      const code = await server.stop();
      assert.equal(code, 0, 'procgen serve should exit 0 on SIGTERM; stderr: ' + server.stderr());
    },
  };
}

/** Saves a screenshot of `locator` (or the page) as PROCGEN_SCREENSHOTS/<name>.png; returns the PNG bytes. */
export async function screenshot(target, name) {
  const dir = env.PROCGEN_SCREENSHOTS ?? 'studio-screenshots';
  mkdirSync(dir, { recursive: true });
  const png = await target.screenshot();
  writeFileSync(join(dir, `${name}.png`), png);
  return png;
}

/** Records a measurement: printed, and appended to PROCGEN_SCREENSHOTS/metrics.jsonl. */
export function report(name, value, unit = '') {
  const dir = env.PROCGEN_SCREENSHOTS ?? 'studio-screenshots';
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, 'metrics.jsonl'), JSON.stringify({ name, value, unit, at: new Date().toISOString() }) + '\n');
  console.log(`studio metric: ${name} = ${value}${unit ? ' ' + unit : ''}`);
}

/**
 * Compares two PNG screenshots (decoded in the page's canvas): `differ`, the
 * fraction of pixels whose RGB differ by more than 24 in sum, and `psnr`, the
 * peak signal-to-noise ratio of the RGB in dB (Infinity when identical).
 */
export async function imageComparison(page, pngA, pngB) {
  return page.evaluate(async ([a, b]) => {
    const load = async (base64) => {
      const img = new Image();
      img.src = 'data:image/png;base64,' + base64;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width; c.height = img.height;
      const g = c.getContext('2d');
      g.drawImage(img, 0, 0);
      return g.getImageData(0, 0, c.width, c.height).data;
    };
    const [x, y] = [await load(a), await load(b)];
    if (x.length !== y.length) return { differ: 1, psnr: 0 };
    let differ = 0, squares = 0;
    for (let i = 0; i < x.length; i += 4) {
      const dr = x[i] - y[i], dg = x[i + 1] - y[i + 1], db = x[i + 2] - y[i + 2];
      if (Math.abs(dr) + Math.abs(dg) + Math.abs(db) > 24) differ++;
      squares += dr * dr + dg * dg + db * db;
    }
    const pixels = x.length / 4, mse = squares / (pixels * 3);
    return { differ: differ / pixels, psnr: mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse) };
  }, [pngA.toString('base64'), pngB.toString('base64')]);
}

/** Fraction of pixels that differ visibly between two PNG screenshots (imageComparison). */
export async function imageDifference(page, pngA, pngB) {
  return (await imageComparison(page, pngA, pngB)).differ;
}

/** Waits until the viewer in `pane` shows content version > `after` (data-rendered). */
export async function waitRendered(page, paneTestId, after = 0, timeout = 30000) {
  await page.waitForFunction(([id, v]) => {
    const view = document.querySelector(`[data-testid="${id}"] [data-rendered]`);
    return view && Number(view.dataset.rendered) > v;
  }, [paneTestId, after], { timeout });
  return page.evaluate((id) => Number(document.querySelector(`[data-testid="${id}"] [data-rendered]`).dataset.rendered), paneTestId);
}

/** Posts raw bytes to the server (outside the page) and returns {status, json}. */
export async function rawPost(url, body, headers = {}) {
  const response = await fetch(url, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...headers } });
  let json = null;
  try { json = await response.json(); } catch { /* not JSON */ }
  return { status: response.status, json };
}

// The studio's shell in a real browser: the page loads offline (every script
// from the server), every tab opens its pane, the server reports its
// backends, and unknown endpoints or oversized bodies get clean 4xx replies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openStudio, rawPost } from './harness.mjs';

test('the page loads from procgen serve alone and every tab opens', async () => {
  const studio = await openStudio('lsystem');
  const { page, server, problems } = studio;
  try {
    const external = [];
    page.on('request', (r) => { if (!r.url().startsWith(server.url)) external.push(r.url()); });
    await page.getByText('backends:').waitFor();
    for (const id of ['noise', 'flame', 'octree', 'lsystem']) {
      await page.getByTestId(`tab-${id}`).click();
      await page.getByTestId(`pane-${id}`).waitFor({ state: 'visible' });
      assert.equal(await page.getByTestId(`tab-${id}`).getAttribute('aria-selected'), 'true');
      assert.match(page.url(), new RegExp(`#${id}$`));
    }
    assert.deepEqual(external, [], 'the page must not reach outside the server (no CDN)');
    assert.deepEqual(problems, []);
  } finally {
    await studio.close();
  }
});

test('unknown endpoints and oversized bodies get JSON 4xx replies', async () => {
  const studio = await openStudio('lsystem', { serverArgs: ['--max-body', '1'] });
  try {
    const url = studio.server.url;
    const missing = await fetch(url + 'api/no-such-thing');
    assert.equal(missing.status, 404);
    assert.equal((await missing.json()).error.kind, 'not_found');
    const big = await rawPost(url + 'api/lsystem/derive', 'x'.repeat(2 << 20));
    assert.equal(big.status, 413);
    // The server is still there afterwards.
    assert.equal((await fetch(url + 'api/info')).status, 200);
  } finally {
    await studio.close();
  }
});

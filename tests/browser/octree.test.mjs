// The Octree tab in a real browser (issue 20 point 5): the points and the leaf
// boxes render; a smaller leaf size changes the view (more, smaller boxes); a
// click on a point queries the server's tree and the result is highlighted
// (its count in the stats); a point file loads through the file input; a
// malformed file shows its line:col and keeps the view; a query without a
// tree is a clean 4xx.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openStudio, waitRendered, screenshot, imageDifference, rawPost, report } from './harness.mjs';

const PANE = 'pane-octree';

/** The stats box's text once it matches `pattern`. */
async function statsMatching(page, pattern, timeout = 30000) {
  await page.waitForFunction(([source, flags]) => new RegExp(source, flags).test(document.querySelector('[data-testid="pane-octree"] [data-testid="stats"]')?.textContent ?? ''),
    [pattern.source, pattern.flags], { timeout });
  return page.getByTestId(PANE).getByTestId('stats').textContent();
}

/** Moves a range input to `value` as a user would (fires input). */
async function setRange(locator, value) {
  await locator.evaluate((input, v) => { input.value = String(v); input.dispatchEvent(new Event('input', { bubbles: true })); }, value);
}

test('octree tab: points and boxes, leaf size, click queries, file upload, errors', async () => {
  const studio = await openStudio('octree');
  const { page, problems, server } = studio;
  try {
    const pane = page.getByTestId(PANE);
    const view = pane.locator('.view');
    // Fewer points than the default keep SwiftShader quick: 20,000 (index 4 of the count steps).
    let version = await waitRendered(page, PANE);
    await setRange(pane.getByTestId('count'), 4);
    version = await waitRendered(page, PANE, version);
    let stats = await statsMatching(page, /points\s+20,000/);
    const leavesAt32 = Number(/leaves ([\d,]+)/.exec(stats)[1].replace(/,/g, ''));
    assert.ok(leavesAt32 > 1, stats);
    assert.match(stats, /build [\d.]+ m?s/);
    const before = await screenshot(view, 'octree-leaf-32');

    // Leaf size 4: a deeper tree with more, smaller boxes.
    await setRange(pane.getByTestId('leaf-size'), 2);
    version = await waitRendered(page, PANE, version);
    stats = await statsMatching(page, /leaf size 4/);
    const leavesAt4 = Number(/leaves ([\d,]+)/.exec(stats)[1].replace(/,/g, ''));
    assert.ok(leavesAt4 > 4 * leavesAt32, `leaf size 4 should make many more leaves: ${leavesAt4} vs ${leavesAt32}`);
    const after = await screenshot(view, 'octree-leaf-4');
    const changed = await imageDifference(page, before, after);
    assert.ok(changed > 0.01, `the view should change with the leaf size (${(changed * 100).toFixed(2)}% of pixels)`);

    // The box toggle hides the wireframes without a round trip.
    await pane.getByTestId('show-boxes').uncheck();
    await page.waitForTimeout(100);
    const noBoxes = await screenshot(view, 'octree-no-boxes');
    assert.ok(await imageDifference(page, after, noBoxes) > 0.01, 'hiding the boxes should change the view');
    await pane.getByTestId('show-boxes').check();

    // A click in the middle of the cloud hits a point: its 16 nearest neighbours come back.
    const box = await view.boundingBox();
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    stats = await statsMatching(page, /knn k=16 at point \d+: 16 results/);
    report('octree knn query round trip (20,000 points, in the page)', Number(/round trip ([\d.]+) ms\)/.exec(stats)?.[1]), 'ms');
    await page.waitForTimeout(100);
    const highlighted = await screenshot(view, 'octree-query');
    assert.ok(await imageDifference(page, after, highlighted) > 0.0005, 'the result points and their leaf should be highlighted');

    // A radius query on the same point: the count follows the slider.
    await pane.getByTestId('query-kind').selectOption('radius');
    stats = await statsMatching(page, /radius [\d.e-]+ at point \d+: [\d,]+ results/);
    const small = Number(/: ([\d,]+) results/.exec(stats)[1].replace(/,/g, ''));
    await setRange(pane.getByTestId('radius'), 90);
    stats = await page.waitForFunction((n) => {
      const m = /: ([\d,]+) results/.exec(document.querySelector('[data-testid="pane-octree"] [data-testid="stats"]').textContent);
      return m && Number(m[1].replace(/,/g, '')) > n;
    }, small);
    assert.deepEqual(await pane.getByTestId('error').textContent(), '');

    // Upload a small point file through the file input (XYZ text: 2 × 2 × 2 corners + the centre).
    const xyz = '# corners and centre\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n0 0 1\n1 0 1\n0 1 1\n1 1 1\n0.5 0.5 0.5\n';
    await pane.getByTestId('file').setInputFiles({ name: 'cube.xyz', mimeType: 'text/plain', buffer: Buffer.from(xyz) });
    version = await waitRendered(page, PANE, version);
    stats = await statsMatching(page, /points\s+9 · cube\.xyz \(XYZ/);

    // A malformed file: the parser's line:col is shown, the last good view stays.
    const goodView = await screenshot(view, 'octree-before-bad-file');
    const problemsBefore = problems.length;
    await pane.getByTestId('file').setInputFiles({ name: 'bad.xyz', mimeType: 'text/plain', buffer: Buffer.from('0 0 0\n1 two 3\n') });
    await page.waitForFunction(() => /bad\.xyz:2:3/.test(document.querySelector('[data-testid="pane-octree"] [data-testid="error"]').textContent));
    assert.match(await pane.getByTestId('error').textContent(), /bad\.xyz:2:3|not a number/);
    assert.equal(await page.evaluate(() => Number(document.querySelector('[data-testid="pane-octree"] [data-rendered]').dataset.rendered)), version);
    assert.match(await pane.getByTestId('stats').textContent(), /cube\.xyz/);
    assert.ok(await imageDifference(page, goodView, await screenshot(view, 'octree-after-bad-file')) < 0.01, 'the last good view stays');
    // The browser logs the expected 422 as a failed resource: that one is not a problem.
    const expected = problems.splice(problemsBefore);
    assert.ok(expected.every((p) => /status of 422/.test(p)), expected.join('\n'));

    // Back to generated points for the README's screenshot (Gaussian, 100,000
    // points, leaf size 32: the tree adapts to the density), with a query shown.
    await pane.getByTestId('distribution').selectOption('gaussian');
    await setRange(pane.getByTestId('count'), 6);
    await setRange(pane.getByTestId('leaf-size'), 5);
    await statsMatching(page, /points\s+100,000 · gaussian[^]*leaf size 32/);
    await pane.getByTestId('query-kind').selectOption('knn');
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await statsMatching(page, /knn k=16 at point \d+: 16 results/);
    await page.waitForTimeout(100);
    await screenshot(page, 'tab-octree');

    // Bad requests from outside the page: clean JSON 4xx.
    const noTree = await rawPost(server.url + 'api/octree/query', JSON.stringify({ kind: 'knn', point: [0, 0, 0] }), { 'X-Procgen-Client': 'nobody' });
    assert.equal(noTree.status, 400);
    assert.equal(noTree.json.error.kind, 'request');
    const tooMany = await rawPost(server.url + 'api/octree/build', JSON.stringify({ count: 1e9 }));
    assert.equal(tooMany.status, 400);
    assert.match(tooMany.json.error.message, /count/);
    assert.deepEqual(problems, []);
  } finally {
    await studio.close();
  }
});

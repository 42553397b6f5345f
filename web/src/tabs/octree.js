// The Octree tab (issue 20 point 5): generate points or load a point file,
// choose the leaf size and the method (seed §4 bottom-up, §5 top-down), see
// the points and the leaf boxes (coloured by depth) in 3D, and click a point
// to query its k nearest neighbours, the points within a radius, or its leaf
// — answered on the tree the server keeps for this page (/api/octree/*,
// docs/studio.md "### Octree"), so a click does not rebuild it.
import { Channel, isSuperseded } from '../api.js';
import { Viewer, pointCloud, boxWireframes, THREE } from '../viewer.js';
import { el, slider, select, debounce, errorBox, formatCount, formatMs, executionControls, tabLayout } from '../ui.js';
import { pickPoint, pointAt } from './octree/pick.js';

const COUNTS = [1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000, 1000000, 2000000];
const LEAF_SIZES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
const RADIUS_MIN = 0.002, RADIUS_MAX = 0.25;  // fractions of the root cube's side, log scale

/** The colour of boxes at `level` of a tree `depth` deep: blue (shallow) to red (deep). */
function levelColor(level, depth) {
  const t = depth > 0 ? level / depth : 0;
  return new THREE.Color().setHSL(0.6 - 0.6 * t, 0.75, 0.55);
}

/** The leaf boxes, one wireframe object per level (one colour each). */
function boxObjects(frame) {
  const { boxes, box_level: levels } = frame.buffers;
  const byLevel = new Map();
  for (let i = 0; i < levels.length; ++i) byLevel.set(levels[i], (byLevel.get(levels[i]) ?? 0) + 1);
  const objects = [];
  for (const [level, n] of [...byLevel].sort((a, b) => a[0] - b[0])) {
    const subset = new Float32Array(6 * n);
    for (let i = 0, j = 0; i < levels.length; ++i) if (levels[i] === level) subset.set(boxes.subarray(6 * i, 6 * i + 6), 6 * j++);
    objects.push(boxWireframes({ boxes: subset, color: levelColor(level, frame.header.depth), opacity: 0.35 }));
  }
  return objects;
}

export default {
  id: 'octree',
  title: 'Octree',
  create(pane, { info }) {
    const { controls, view, stats } = tabLayout(pane, 'octree', { statsText: 'building…' });
    const viewer = new Viewer(view);
    view.append(stats);
    const overlay = new THREE.Group();  // the query's result: drawn over the tree, cleared with it
    overlay.renderOrder = 10;
    viewer.scene.add(overlay);

    // State: the page keeps the last good tree on screen until a new one arrives.
    let file = null;      // a loaded point file: the source until a point control moves
    let tree = null;      // the last good tree frame
    let points = null;    // its THREE.Points
    let boxes = [];       // its box wireframes
    let picked = -1;      // the queried point's index
    let lastQuery = null; // the last query frame
    let roundTripMs = 0, queryRoundTripMs = 0;

    const buildChannel = new Channel('/api/octree/build');
    const uploadChannel = new Channel('/api/octree/upload');
    const queryChannel = new Channel('/api/octree/query');

    // --- points ---
    const pointsBox = el('fieldset', {}, el('legend', { textContent: 'Points' }));
    controls.append(pointsBox);
    const distribution = select(pointsBox, {
      key: 'distribution', label: 'Distribution', options: ['uniform', 'gaussian', 'plummer'], value: 'gaussian',
      onChange: () => generated(),
    });
    const count = slider(pointsBox, {
      key: 'count', label: 'Points', min: 0, max: COUNTS.length - 1, value: COUNTS.indexOf(100000),
      format: (i) => formatCount(COUNTS[i]), onInput: () => generatedSoon(),
    });
    const seed = slider(pointsBox, { key: 'seed', label: 'Seed', min: 1, max: 100, value: 1, onInput: () => generatedSoon() });
    const fileInput = el('input', { type: 'file', accept: '.ply,.xyz,.txt,.pts,.csv,.off,.obj' });
    fileInput.dataset.testid = 'file';
    fileInput.addEventListener('change', () => {
      if (!fileInput.files.length) return;
      file = fileInput.files[0];
      rebuild();
    });
    pointsBox.append(el('div', { className: 'row' }, el('label', { textContent: 'Point file' }), fileInput));
    pointsBox.append(el('p', { className: 'muted', textContent: 'PLY (ascii, binary), XYZ, OFF or OBJ; a point control above goes back to generated points.' }));

    // --- tree ---
    const treeBox = el('fieldset', {}, el('legend', { textContent: 'Tree' }));
    controls.append(treeBox);
    const method = select(treeBox, {
      key: 'method', label: 'Method', value: 'bottom-up', onChange: () => rebuild(),
      options: [['bottom-up', 'bottom-up (Morton keys, §4)'], ['top-down', 'top-down (partitioning, §5)']],
    });
    const leafSize = slider(treeBox, {
      key: 'leaf-size', label: 'Leaf size', min: 0, max: LEAF_SIZES.length - 1, value: LEAF_SIZES.indexOf(32),
      format: (i) => String(LEAF_SIZES[i]), onInput: () => rebuildSoon(),
    });
    const boxSet = select(treeBox, {
      key: 'boxes', label: 'Leaf boxes', value: 'nonempty', onChange: () => rebuild(),
      options: [['nonempty', 'leaves with points'], ['leaves', 'every leaf']],
    });
    const showBoxes = el('input', { type: 'checkbox', checked: true });
    showBoxes.dataset.testid = 'show-boxes';
    showBoxes.addEventListener('change', () => {
      for (const o of boxes) o.visible = showBoxes.checked;
      viewer.requestRender();
    });
    treeBox.append(el('div', { className: 'row' }, el('label', { textContent: 'Show boxes' }), showBoxes));

    // --- query ---
    const queryBox = el('fieldset', {}, el('legend', { textContent: 'Query (click a point)' }));
    controls.append(queryBox);
    const kind = select(queryBox, {
      key: 'query-kind', label: 'Query', value: 'knn', onChange: () => { showQueryControls(); requery(); },
      options: [['knn', 'k nearest neighbours'], ['radius', 'points within a radius'], ['locate', 'the leaf of the point']],
    });
    const k = slider(queryBox, { key: 'k', label: 'k', min: 1, max: 256, value: 16, onInput: () => requerySoon() });
    const radiusOf = (v) => RADIUS_MIN * Math.pow(RADIUS_MAX / RADIUS_MIN, v / 100);
    const radius = slider(queryBox, {
      key: 'radius', label: 'Radius', min: 0, max: 100, value: 40,
      format: (v) => (tree ? (radiusOf(v) * tree.header.cube.side).toPrecision(3) : (radiusOf(v) * 100).toPrecision(3) + '% of side'),
      onInput: () => requerySoon(),
    });
    const showQueryControls = () => {
      k.input.parentElement.style.display = kind.value === 'knn' ? '' : 'none';
      radius.input.parentElement.style.display = kind.value === 'radius' ? '' : 'none';
    };
    showQueryControls();

    const execution = executionControls(controls, info, () => rebuild());
    const error = errorBox();
    controls.append(error);

    // Parse errors of an uploaded file come with the compiler-style file:line:col diagnostic.
    const showError = (e) => { if (!isSuperseded(e)) error.textContent = e.diagnostic ?? e.message; };

    function treeParams() {
      return {
        leaf_size: LEAF_SIZES[leafSize.value], method: method.value, boxes: boxSet.value, ...execution(),
      };
    }

    async function rebuild() {
      const t0 = performance.now();
      let frame;
      try {
        if (file) {
          buildChannel.abort();
          frame = await uploadChannel.upload(file, { name: file.name, ...treeParams() });
        } else {
          uploadChannel.abort();
          frame = await buildChannel.post({
            distribution: distribution.value, count: COUNTS[count.value], seed: seed.value, ...treeParams(),
          });
        }
      } catch (e) {
        showError(e);
        return;
      }
      roundTripMs = performance.now() - t0;
      error.textContent = '';
      const sameSource = tree && tree.header.points === frame.header.points &&
        JSON.stringify(tree.header.source) === JSON.stringify(frame.header.source);
      showTree(frame, !sameSource);
      // The same points (another leaf size or method): the picked point still exists, query the new tree.
      if (sameSource && picked >= 0) requery();
      else clearQuery();
    }
    const rebuildSoon = debounce(rebuild, 120);
    function generated() {
      file = null;
      fileInput.value = '';
      rebuild();
    }
    const generatedSoon = debounce(generated, 120);

    function showTree(frame, fit) {
      tree = frame;
      const { positions } = frame.buffers;
      points = pointCloud({ positions, bounds: frame.header.bounds, size: 2, color: 0x8ecbff });
      boxes = boxObjects(frame);
      for (const o of boxes) o.visible = showBoxes.checked;
      viewer.setContent([points, ...boxes], { fit });
      radius.set(radius.value);  // its label shows the absolute radius of this tree
      showStats();
    }

    function clearQuery() {
      picked = -1;
      lastQuery = null;
      queryChannel.abort();
      setOverlay([]);
      showStats();
    }

    function setOverlay(objects) {
      for (const child of [...overlay.children]) {
        overlay.remove(child);
        child.geometry.dispose();
        child.material.dispose();
      }
      for (const o of objects) {
        o.material.depthTest = false;
        o.renderOrder = 10;
        overlay.add(o);
      }
      viewer.requestRender();
    }

    async function requery() {
      if (!tree || picked < 0) return;
      const params = { kind: kind.value, index: picked, ...execution() };
      if (kind.value === 'knn') params.k = k.value;
      if (kind.value === 'radius') params.radius = radiusOf(radius.value) * tree.header.cube.side;
      const t0 = performance.now();
      let frame;
      try {
        frame = await queryChannel.post(params);
      } catch (e) {
        showError(e);
        return;
      }
      error.textContent = '';
      lastQuery = frame;
      queryRoundTripMs = performance.now() - t0;
      const { positions } = tree.buffers;
      const { indices } = frame.buffers;
      const xyz = new Float32Array(3 * indices.length);
      for (let i = 0; i < indices.length; ++i) xyz.set(pointAt(positions, tree.header.bounds, indices[i]), 3 * i);
      const objects = [pointCloud({ positions: xyz, size: 6, color: 0xff5cf0 }),
        pointCloud({ positions: new Float32Array(frame.header.point), size: 11, color: 0xffffff })];
      if (frame.header.leaf) objects.push(boxWireframes({ boxes: new Float64Array(frame.header.leaf.box), color: 0xffffff, opacity: 1 }));
      setOverlay(objects);
      showStats();
    }
    const requerySoon = debounce(requery, 60);

    function showStats() {
      if (!tree) return;
      const h = tree.header;
      const t = h.timings;
      const source = h.source.kind === 'file' ? `${h.source.name} (${h.source.format}, ${formatCount(h.source.bytes)} bytes)`
        : `${h.source.distribution}, seed ${h.source.seed}`;
      const lines = [
        `points   ${formatCount(h.points)} · ${source}`,
        `nodes    ${formatCount(h.nodes)} · leaves ${formatCount(h.leaves)} (${formatCount(h.empty_leaves)} empty) · depth ${h.depth}`,
        `boxes    ${formatCount(h.boxes)}${h.boxes < h.boxes_total ? ` of ${formatCount(h.boxes_total)} (thinned)` : ''} · ${h.method}, leaf size ${h.leaf_size}`,
        `${t.read_ms !== undefined ? 'read ' + formatMs(t.read_ms) : 'generate ' + formatMs(t.generate_ms)} · build ${formatMs(t.build_ms)} · encode ${formatMs(t.encode_ms)} · round trip ${formatMs(roundTripMs)}`,
      ];
      if (lastQuery) {
        const q = lastQuery.header;
        const what = q.kind === 'knn' ? `knn k=${q.k}` : q.kind === 'radius' ? `radius ${q.radius.toPrecision(3)}` : 'locate';
        const leaf = q.leaf ? ` · leaf level ${q.leaf.level}, ${formatCount(q.leaf.points)} points` : ' · outside the root cube';
        lines.push(`query    ${what} at point ${q.index}: ${formatCount(q.results)} results in ${formatMs(q.timings.query_ms)} (round trip ${formatMs(queryRoundTripMs)})${leaf}`);
      } else {
        lines.push('query    click a point');
      }
      if (tree.header.kept === false) lines.push('         (the server could not keep this tree: queries need a rebuild)');
      stats.textContent = lines.join('\n');
    }

    // A click (not a drag of the orbit controls) on a point queries it.
    const canvas = viewer.renderer.domElement;
    let down = null;
    canvas.addEventListener('pointerdown', (e) => { down = { x: e.clientX, y: e.clientY }; });
    canvas.addEventListener('pointerup', (e) => {
      if (!down || !tree || !points) return;
      const moved = Math.hypot(e.clientX - down.x, e.clientY - down.y);
      down = null;
      if (moved > 4) return;
      const rect = canvas.getBoundingClientRect();
      const index = pickPoint({
        positions: tree.buffers.positions, object: points, camera: viewer.camera, canvas,
        x: e.clientX - rect.left, y: e.clientY - rect.top,
      });
      if (index < 0) return;
      picked = index;
      requery();
    });

    let started = false;
    return {
      activate() {
        if (!started) {
          started = true;
          rebuild();
        }
      },
    };
  },
};

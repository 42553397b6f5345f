// The Noise tab (issue 20 point 3): the noise seed's viewer
// (shared/seeds/001_191daa7b81372e37.txt §5) — the voxel terrain turned by the
// mouse, a panel choosing the algorithm, octaves and the threshold above which
// voxels are solid. 3D: the iso-surface of a noise volume
// (POST /api/noise/terrain); 2D: the colour-mapped heightmap as an image or as
// a terrain grid in 3D (POST /api/noise/heightmap). Every control sends a
// request at once (one per animation frame at most): the Channel aborts the
// stale one and the server cancels its job, so a moving slider never queues.
import { Channel, isSuperseded } from '../api.js';
import { Viewer, triangleMesh, THREE } from '../viewer.js';
import { el, slider, select, button, errorBox, executionControls, formatCount, formatMs, tabLayout } from '../ui.js';

const TYPES = ['perlin', 'simplex', 'value', 'cellular'];
const FRACTALS = ['fbm', 'ridged', 'billow', 'pingpong', 'none'];
const SIZES_2D = [128, 256, 512, 1024, 2048];
const SIZES_HEIGHTFIELD = [64, 128, 256, 512, 1024];
const SIZES_3D = [32, 48, 64, 96, 128, 160, 192]; // 192³ at threshold 0: ~3 M triangles, ~70 MB

// The server's colours are sRGB bytes; three.js takes vertex colours as linear.
const SRGB_TO_LINEAR = Uint8Array.from({ length: 256 }, (_, i) => {
  const c = i / 255;
  return Math.round(255 * (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
});

/** RGB vertex colours (linear) from sRGB bytes with `stride` bytes per vertex (3 or 4). */
function linearColors(srgb, stride) {
  const n = srgb.length / stride;
  const out = new Uint8Array(n * 3);
  for (let i = 0; i < n; ++i) for (let c = 0; c < 3; ++c) out[3 * i + c] = SRGB_TO_LINEAR[srgb[stride * i + c]];
  return out;
}

/** The heightmap as a flat textured quad (x right, y up: the image's top row at the top). */
function imagePlane(rgba, width, height) {
  const texture = new THREE.DataTexture(rgba, width, height, THREE.RGBAFormat);
  texture.colorSpace = THREE.SRGBColorSpace;
  texture.magFilter = THREE.NearestFilter;
  texture.needsUpdate = true;
  const geometry = new THREE.PlaneGeometry(width, height);
  const uv = geometry.attributes.uv;
  for (let i = 0; i < uv.count; ++i) uv.setY(i, 1 - uv.getY(i)); // texture row 0 is the image's top row
  const material = new THREE.MeshBasicMaterial({ map: texture });
  const mesh = new THREE.Mesh(geometry, material);
  const dispose = material.dispose.bind(material);
  material.dispose = () => { texture.dispose(); dispose(); };
  return mesh;
}

export default {
  id: 'noise',
  title: 'Noise',
  create(pane, { info }) {
    const { controls, view, stats } = tabLayout(pane, 'noise', { statsText: 'computing…' });
    const viewer = new Viewer(view);
    view.append(stats);

    const heightmapChannel = new Channel('/api/noise/heightmap');
    const terrainChannel = new Channel('/api/noise/terrain');
    const exportChannel = new Channel('/api/noise/export');

    // --- controls --------------------------------------------------------
    const dimension = select(controls, {
      key: 'dimension', label: 'Dimension', value: '3d',
      options: [['3d', '3D terrain (iso-surface)'], ['2d', '2D heightmap']],
      onChange: () => { refreshVisibility(); schedule(); },
    });
    const view2d = select(controls, {
      key: 'view2d', label: 'Heightmap view', value: 'image',
      options: [['image', 'image'], ['heightfield', '3D heightfield']],
      onChange: () => { refreshVisibility(); schedule(); },
    });
    const size = select(controls, { key: 'size', label: 'Size', options: [], onChange: () => schedule() });
    const type = select(controls, { key: 'type', label: 'Algorithm', options: TYPES, value: 'perlin', onChange: () => { refreshVisibility(); schedule(); } });
    const fractal = select(controls, { key: 'fractal', label: 'Fractal', options: FRACTALS, value: 'fbm', onChange: () => schedule() });
    const octaves = slider(controls, { key: 'octaves', label: 'Octaves', min: 1, max: 16, value: 5, onInput: () => schedule() });
    const frequency = slider(controls, {
      key: 'frequency', label: 'Frequency', min: -3, max: -0.5, step: 0.01, value: Math.log10(0.0173),
      format: (v) => (10 ** v).toPrecision(3), onInput: () => schedule(),
    });
    const lacunarity = slider(controls, { key: 'lacunarity', label: 'Lacunarity', min: 1, max: 4, step: 0.05, value: 2, format: (v) => v.toFixed(2), onInput: () => schedule() });
    const gain = slider(controls, { key: 'gain', label: 'Gain', min: 0, max: 1, step: 0.01, value: 0.5, format: (v) => v.toFixed(2), onInput: () => schedule() });
    const seed = slider(controls, { key: 'seed', label: 'Seed', min: 0, max: 9999, value: 1337, onInput: () => schedule() });
    button(controls, { key: 'random-seed', text: 'Random seed', onClick: () => { seed.set(Math.floor(Math.random() * 10000)); schedule(); } });
    const threshold = slider(controls, { key: 'threshold', label: 'Threshold', min: -1, max: 1, step: 0.01, value: 0, format: (v) => v.toFixed(2), onInput: () => schedule() });
    const colormap = select(controls, { key: 'colormap', label: 'Colours', options: ['terrain', 'viridis', 'gray'], value: 'terrain', onChange: () => schedule() });
    const colourRange = select(controls, {
      key: 'range', label: 'Colour range', value: 'field',
      options: [['field', 'the field’s min..max'], ['full', '[−1, 1] (every type’s range)']], onChange: () => schedule(),
    });

    const cellular = el('fieldset', {}, el('legend', { textContent: 'Cellular' }));
    const cellularDistance = select(cellular, { key: 'cellular_distance', label: 'Distance', options: ['euclidean', 'sq', 'manhattan', 'chebyshev'], onChange: () => schedule() });
    const cellularReturn = select(cellular, { key: 'cellular_return', label: 'Return', options: ['f1', 'f2', 'f2-f1', 'value'], onChange: () => schedule() });
    const jitter = slider(cellular, { key: 'jitter', label: 'Jitter', min: 0, max: 1, step: 0.01, value: 1, format: (v) => v.toFixed(2), onInput: () => schedule() });
    controls.append(cellular);

    const execution = executionControls(controls, info, () => schedule());

    const exports = el('div', { className: 'row noise-export' }, el('label', { textContent: 'Export' }));
    const exportButtons = {
      png: button(exports, { key: 'export-png', text: 'PNG', onClick: () => download('png') }),
      png16: button(exports, { key: 'export-png16', text: '16-bit PNG', onClick: () => download('png16') }),
      glb: button(exports, { key: 'export-glb', text: 'GLB', onClick: () => download('glb') }),
      obj: button(exports, { key: 'export-obj', text: 'OBJ', onClick: () => download('obj') }),
    };
    controls.append(exports);

    const error = errorBox();
    controls.append(error);
    controls.append(el('p', {
      className: 'muted',
      textContent: 'Drag to turn, wheel to zoom. 3D: the voxels above the threshold are solid (the seed’s voxel terrain); ' +
        'every algorithm gives values in [−1, 1].',
    }));

    function setSizes(options, preferred) {
      const current = Number(size.value) || preferred;
      size.replaceChildren(...options.map((n) => el('option', { value: String(n), textContent: `${n}` })));
      size.value = String(options.includes(current) ? current : preferred);
    }
    let sizeMode = '';
    function refreshVisibility() {
      const is3d = dimension.value === '3d';
      view2d.parentElement.hidden = is3d;
      threshold.input.parentElement.hidden = !is3d;
      colourRange.parentElement.hidden = is3d;
      cellular.hidden = type.value !== 'cellular';
      exportButtons.png.hidden = exportButtons.png16.hidden = is3d;
      const mode = is3d ? '3d' : view2d.value;
      if (mode !== sizeMode) {
        sizeMode = mode;
        if (mode === '3d') setSizes(SIZES_3D, 64);
        else if (mode === 'heightfield') setSizes(SIZES_HEIGHTFIELD, 256);
        else setSizes(SIZES_2D, 512);
      }
      size.dataset.mode = mode;
    }
    refreshVisibility();

    function params() {
      const is3d = dimension.value === '3d';
      const p = {
        type: type.value,
        fractal: fractal.value,
        octaves: octaves.value,
        frequency: Number((10 ** frequency.value).toPrecision(3)),
        lacunarity: lacunarity.value,
        gain: gain.value,
        seed: seed.value,
        size: Number(size.value),
        colormap: colormap.value,
        ...execution(),
      };
      if (type.value === 'cellular') Object.assign(p, { cellular_distance: cellularDistance.value, cellular_return: cellularReturn.value, jitter: jitter.value });
      if (is3d) p.threshold = threshold.value;
      else p.range = colourRange.value;
      if (!is3d && view2d.value === 'heightfield') p.mesh = true;
      return p;
    }

    // --- requests ---------------------------------------------------------
    let latest = 0;
    let scheduled = false;
    let fitKey = '';
    /** One request per animation frame at most, with the newest values. */
    function schedule() {
      if (scheduled) return;
      scheduled = true;
      requestAnimationFrame(() => { scheduled = false; run(); });
    }

    async function run() {
      const is3d = dimension.value === '3d';
      const mode = is3d ? '3d' : view2d.value;
      const request = params();
      const ticket = ++latest;
      (is3d ? heightmapChannel : terrainChannel).abort();
      const started = performance.now();
      try {
        const frame = await (is3d ? terrainChannel : heightmapChannel).post(request);
        if (ticket !== latest) return;
        show(mode, frame, performance.now() - started, `${mode} ${request.size}`);
        error.textContent = '';
      } catch (e) {
        if (isSuperseded(e) || ticket !== latest) return;
        error.textContent = e.message; // the last good view stays
      }
    }

    function show(mode, { header, buffers }, roundTripMs, key) {
      const fit = key !== fitKey;
      fitKey = key;
      let object;
      if (mode === 'image') {
        object = imagePlane(buffers.rgba, header.width, header.height);
      } else {
        const colors = mode === 'heightfield' ? linearColors(buffers.rgba, 4) : buffers.colors && linearColors(buffers.colors, 3);
        object = triangleMesh({
          positions: buffers.positions, normals: buffers.normals, indices: buffers.indices, bounds: header.bounds,
          colors, color: 0xb9c79a,
        });
      }
      viewer.controls.enableRotate = mode !== 'image';
      viewer.setContent([object], { fit: false });
      if (fit) viewer.fit({ view2d: mode === 'image' });
      const t = header.timings;
      const lines = [
        `${header.type} ${header.size.join('×')} = ${formatCount(header.points)} ${mode === '3d' ? 'voxels' : 'samples'}`,
        `range [${header.min.toFixed(3)}, ${header.max.toFixed(3)}]${mode === '3d' ? ` · threshold ${header.threshold.toFixed(2)}` : ''}`,
      ];
      if (header.vertices !== undefined) lines.push(`${formatCount(header.vertices)} vertices · ${formatCount(header.triangles)} triangles`);
      const stages = [`noise ${formatMs(t.noise_ms)}`];
      if (t.image_ms !== undefined) stages.push(`image ${formatMs(t.image_ms)}`);
      if (t.mesh_ms !== undefined) stages.push(`mesh ${formatMs(t.mesh_ms)}`);
      lines.push(stages.join(' · '));
      lines.push(`server ${formatMs(t.total_ms)} · round trip ${formatMs(roundTripMs)}`);
      lines.push(`${header.backend} · ${header.threads} thread${header.threads === 1 ? '' : 's'}`);
      stats.textContent = lines.join('\n');
    }

    async function download(format) {
      const is3d = dimension.value === '3d';
      const p = { ...params(), format, dims: is3d ? 3 : 2 };
      delete p.mesh;
      if (is3d) delete p.colormap; // the 3D file is the bare iso-surface
      try {
        await exportChannel.download(p, `noise.${format === 'png16' ? 'png' : format}`);
      } catch (e) {
        if (!isSuperseded(e)) error.textContent = e.message;
      }
    }

    let started = false;
    return {
      activate() {
        if (!started) { started = true; schedule(); }
        viewer.resize();
      },
    };
  },
};

// Picking for the Octree tab: the point a click hits, as a ray cast would
// find it — of the points drawn within `radiusPx` of the click, the one
// nearest the camera. Every point is projected with the camera in one pass
// over the typed array (no per-point objects: 2·10^6 points take a few tens
// of ms).
import { THREE } from '../../viewer.js';

/**
 * positions: the frame's buffer (Uint16Array normalized into `bounds`, or
 * Float32Array); object: the THREE.Points drawing them (its matrixWorld holds
 * the bounds' placement); (x, y): the click in CSS pixels of `canvas`.
 * Returns the point index, or -1 when none is within radiusPx.
 */
export function pickPoint({ positions, object, camera, canvas, x, y, radiusPx = 6 }) {
  const rect = canvas.getBoundingClientRect();
  const halfW = rect.width / 2, halfH = rect.height / 2;
  const cx = x / halfW - 1, cy = 1 - y / halfH;  // the click in normalized device coordinates
  object.updateMatrixWorld();
  camera.updateMatrixWorld();
  const m = new THREE.Matrix4().multiplyMatrices(camera.projectionMatrix, camera.matrixWorldInverse).multiply(object.matrixWorld);
  if (positions instanceof Uint16Array) m.multiply(new THREE.Matrix4().makeScale(1 / 65535, 1 / 65535, 1 / 65535));
  const e = m.elements;  // column-major
  const limit = radiusPx * radiusPx;
  let best = -1, bestDepth = Infinity;
  for (let i = 0, n = positions.length / 3; i < n; ++i) {
    const px = positions[3 * i], py = positions[3 * i + 1], pz = positions[3 * i + 2];
    const w = e[3] * px + e[7] * py + e[11] * pz + e[15];
    if (w <= camera.near || w >= bestDepth) continue;
    const sx = ((e[0] * px + e[4] * py + e[8] * pz + e[12]) / w - cx) * halfW;
    const sy = ((e[1] * px + e[5] * py + e[9] * pz + e[13]) / w - cy) * halfH;
    if (sx * sx + sy * sy > limit) continue;
    best = i, bestDepth = w;
  }
  return best;
}

/** World coordinates of point i (dequantized when u16). */
export function pointAt(positions, bounds, i) {
  if (!(positions instanceof Uint16Array)) return [positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]];
  return [0, 1, 2].map((a) => bounds[a] + (positions[3 * i + a] / 65535) * (bounds[3 + a] - bounds[a]));
}

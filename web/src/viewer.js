// The studio's 3D view (three.js): orbit, zoom, fit; renders on demand (when
// the content or the camera changes), so an idle page costs nothing. Each
// tab owns one Viewer; content is built from the server's typed buffers
// without copies (lines, meshes, points, boxes below).
//
// Test hook: after the first frame that shows new content, the container's
// data-rendered attribute holds the content version (1, 2, …).
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

export class Viewer {
  constructor(container) {
    this.container = container;
    this.renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
    this.renderer.setClearColor(0x15171c);
    container.append(this.renderer.domElement);
    this.scene = new THREE.Scene();
    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x404050, 2.2));
    const sun = new THREE.DirectionalLight(0xffffff, 1.6);
    sun.position.set(1, 2, 1.5);
    this.scene.add(sun);
    this.camera = new THREE.PerspectiveCamera(40, 1, 0.01, 1000);
    this.camera.position.set(0, 0, 5);
    this.controls = new OrbitControls(this.camera, this.renderer.domElement);
    this.controls.addEventListener('change', () => this.requestRender());
    this.content = new THREE.Group();
    this.scene.add(this.content);
    this.version = 0;
    this.renderedVersion = 0;
    this.pending = 0;  // the id of a pending animation frame, 0 for none
    new ResizeObserver(() => this.resize()).observe(container);
    this.resize();
  }

  resize() {
    const { clientWidth: w, clientHeight: h } = this.container;
    if (w === 0 || h === 0) return;
    this.renderer.setSize(w, h, false);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
    this.requestRender();
  }

  /** Draws on the next animation frame (camera moves: many a frame, one draw). */
  requestRender() {
    if (this.pending) return;
    this.pending = requestAnimationFrame(() => this.renderNow());
  }

  /**
   * Draws at once (a frame pending is drawn now instead). New content is
   * drawn as soon as it is set: waiting for the next animation frame would
   * add up to a frame's time (16.7 ms at 60 Hz) before the draw even starts.
   */
  renderNow() {
    if (this.pending) cancelAnimationFrame(this.pending);
    this.pending = 0;
    this.renderer.render(this.scene, this.camera);
    if (this.renderedVersion !== this.version) {
      this.renderedVersion = this.version;
      this.container.dataset.rendered = String(this.version);
      this.onRendered?.(this.version);
    }
  }

  /** Replaces the content with `objects` (disposing the old); fits the camera when asked or on first content. */
  setContent(objects, { fit = false } = {}) {
    const first = this.content.children.length === 0 && this.version === 0;
    for (const child of [...this.content.children]) {
      this.content.remove(child);
      child.traverse?.((o) => {
        o.geometry?.dispose();
        (Array.isArray(o.material) ? o.material : [o.material]).forEach((m) => m?.dispose());
      });
    }
    for (const o of objects) this.content.add(o);
    this.version += 1;
    if (fit || first) this.fit();
    this.renderNow();
  }

  /** Frames the content's bounding box. `view2d`: look down -Z (for flat models). */
  fit({ view2d } = {}) {
    const box = new THREE.Box3().setFromObject(this.content);
    if (box.isEmpty()) return this.requestRender();
    const center = box.getCenter(new THREE.Vector3());
    const size = box.getSize(new THREE.Vector3());
    const radius = Math.max(size.length() / 2, 1e-6);
    const flat = view2d ?? size.z < 1e-6 * radius;
    const distance = radius / Math.sin(THREE.MathUtils.degToRad(this.camera.fov / 2));
    const direction = flat ? new THREE.Vector3(0, 0, 1) : new THREE.Vector3(0.6, 0.45, 1).normalize();
    this.camera.position.copy(center).addScaledVector(direction, distance * 1.05);
    this.camera.near = distance / 1000;
    this.camera.far = distance * 10;
    this.camera.updateProjectionMatrix();
    this.controls.target.copy(center);
    this.controls.update();
    this.requestRender();
  }

  /**
   * What the server needs to size a first view to this one: the drawing
   * buffer in pixels and the world → clip matrix (column-major).
   */
  viewState() {
    const size = this.renderer.getDrawingBufferSize(new THREE.Vector2());
    this.camera.updateMatrixWorld();
    const matrix = new THREE.Matrix4().multiplyMatrices(this.camera.projectionMatrix, this.camera.matrixWorldInverse);
    return { width: Math.max(1, size.x), height: Math.max(1, size.y), matrix: matrix.elements.slice() };
  }

  /** A PNG of the current view (a Blob). */
  async screenshot() {
    this.renderer.render(this.scene, this.camera);
    return new Promise((resolve) => this.renderer.domElement.toBlob(resolve, 'image/png'));
  }
}

/** Places a unit-quantized object (normalized u16 positions in [0,1]) into its box [min, max]. */
function placeQuantized(object, bounds) {
  if (!bounds) return object;
  const [x0, y0, z0, x1, y1, z1] = bounds;
  object.scale.set(Math.max(x1 - x0, 1e-30), Math.max(y1 - y0, 1e-30), Math.max(z1 - z0, 1e-30));
  object.position.set(x0, y0, z0);
  return object;
}

function positionAttribute(positions) {
  // Uint16 positions are normalized to [0, 1] of the bounds (half the bytes of floats).
  return new THREE.BufferAttribute(positions, 3, positions instanceof Uint16Array);
}

/**
 * Line segments: positions hold 2 vertices per segment (Float32Array, or
 * Uint16Array normalized into `bounds` = [x0,y0,z0,x1,y1,z1]); colors are
 * optional RGB per vertex (Uint8Array normalized, or Float32Array).
 */
export function lineSegments({ positions, colors, bounds, color = 0xd8e6c4 }) {
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', positionAttribute(positions));
  if (colors) geometry.setAttribute('color', new THREE.BufferAttribute(colors, 3, colors instanceof Uint8Array));
  const material = new THREE.LineBasicMaterial({ color: colors ? 0xffffff : color, vertexColors: !!colors });
  return placeQuantized(new THREE.LineSegments(geometry, material), positions instanceof Uint16Array ? bounds : null);
}

/** A triangle mesh: positions (3 per vertex), optional indices (Uint32Array), normals, colors. */
export function triangleMesh({ positions, indices, normals, colors, bounds, color = 0x9fb8d0, doubleSided = true }) {
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', positionAttribute(positions));
  if (indices) geometry.setIndex(new THREE.BufferAttribute(indices, 1));
  if (normals) geometry.setAttribute('normal', new THREE.BufferAttribute(normals, 3, normals instanceof Int8Array || normals instanceof Int16Array));
  else geometry.computeVertexNormals();
  if (colors) geometry.setAttribute('color', new THREE.BufferAttribute(colors, 3, colors instanceof Uint8Array));
  const material = new THREE.MeshStandardMaterial({
    color: colors ? 0xffffff : color, vertexColors: !!colors, roughness: 0.8, metalness: 0.0,
    side: doubleSided ? THREE.DoubleSide : THREE.FrontSide,
  });
  return placeQuantized(new THREE.Mesh(geometry, material), positions instanceof Uint16Array ? bounds : null);
}

/** Points: positions (3 per point), optional colors; size in pixels. */
export function pointCloud({ positions, colors, bounds, size = 2, color = 0x8ecbff }) {
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', positionAttribute(positions));
  if (colors) geometry.setAttribute('color', new THREE.BufferAttribute(colors, 3, colors instanceof Uint8Array));
  const material = new THREE.PointsMaterial({ size, sizeAttenuation: false, color: colors ? 0xffffff : color, vertexColors: !!colors });
  return placeQuantized(new THREE.Points(geometry, material), positions instanceof Uint16Array ? bounds : null);
}

/** Axis-aligned boxes as wireframe: boxes = Float32Array/Float64Array of [x0,y0,z0,x1,y1,z1] per box. */
export function boxWireframes({ boxes, color = 0x6cb6ff, opacity = 0.5 }) {
  const n = Math.floor(boxes.length / 6);
  const positions = new Float32Array(n * 24 * 3);
  // The 12 edges of a box as pairs of corner indices (corner bits: x, y, z).
  const edges = [0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 1, 3, 4, 6, 5, 7, 0, 4, 1, 5, 2, 6, 3, 7];
  for (let b = 0, p = 0; b < n; ++b) {
    const o = b * 6;
    for (const corner of edges) {
      positions[p++] = boxes[o + (corner & 1 ? 3 : 0)];
      positions[p++] = boxes[o + 1 + (corner & 2 ? 3 : 0)];
      positions[p++] = boxes[o + 2 + (corner & 4 ? 3 : 0)];
    }
  }
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', new THREE.BufferAttribute(positions, 3));
  const material = new THREE.LineBasicMaterial({ color, transparent: opacity < 1, opacity });
  return new THREE.LineSegments(geometry, material);
}

export { THREE };

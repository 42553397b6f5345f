// The studio's client for the server's /api/ (docs/studio.md). Every
// computation goes through a Channel: a new request aborts the one in flight
// (fetch AbortController) and tells the server so (header X-Procgen-Client +
// the channel: the server cancels the stale job), so edits never queue.
import { decodeFrame, readFrames } from './frames.js';

export const clientId = (crypto.randomUUID?.() ?? String(Math.random()).slice(2)) + '';
/** Numbers the page's requests (X-Procgen-Seq): two sent ms apart may reach the server in either order. */
let sequence = 0;

export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.kind = error?.kind ?? 'http';
    this.line = error?.line;
    this.column = error?.column;
    this.diagnostic = error?.diagnostic;
  }
}

async function failure(response) {
  let error = null;
  try { error = (await response.json()).error; } catch { /* not JSON */ }
  return new ApiError(response.status, error);
}

export async function getJson(path) {
  const response = await fetch(path);
  if (!response.ok) throw await failure(response);
  return response.json();
}

export async function getText(path) {
  const response = await fetch(path);
  if (!response.ok) throw await failure(response);
  return response.text();
}

/** True for the rejection of a request a newer one replaced (callers ignore it). */
export function isSuperseded(error) {
  return error?.name === 'AbortError' || error?.kind === 'cancelled';
}

export class Channel {
  constructor(path) {
    this.path = path;
    this.controller = null;
  }
  abort() {
    this.controller?.abort();
    this.controller = null;
  }
  async fetch(params) {
    this.abort();
    const controller = (this.controller = new AbortController());
    const response = await fetch(this.path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Procgen-Client': clientId, 'X-Procgen-Seq': String(++sequence) },
      body: JSON.stringify(params),
      signal: controller.signal,
    });
    if (!response.ok) throw await failure(response);
    return { response, controller };
  }
  /** POST params; resolves to the decoded frame (binary reply) or the JSON value. */
  async post(params) {
    const { response, controller } = await this.fetch(params);
    const type = response.headers.get('Content-Type') ?? '';
    const result = type.startsWith('application/octet-stream') ? decodeFrame(await response.arrayBuffer()) : await response.json();
    if (this.controller === controller) this.controller = null;
    return result;
  }
  /**
   * POST params; calls onFrame for each frame of the streamed reply (a
   * promise it returns holds the reading until it settles). Error frames reject.
   */
  async stream(params, onFrame) {
    const { response, controller } = await this.fetch(params);
    await readFrames(response, (frame) => {
      if (frame.header.error) throw new ApiError(frame.header.status ?? 422, frame.header.error);
      return this.controller === controller ? onFrame(frame) : undefined;
    });
    if (this.controller === controller) this.controller = null;
  }
  /**
   * POST `body` (a File, Blob or ArrayBuffer) as the raw request body with
   * `params` in the query string (an Api::upload endpoint); resolves like post.
   */
  async upload(body, params = {}) {
    this.abort();
    const controller = (this.controller = new AbortController());
    const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
    const response = await fetch(`${this.path}?${query}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream', 'X-Procgen-Client': clientId, 'X-Procgen-Seq': String(++sequence) },
      body,
      signal: controller.signal,
    });
    if (!response.ok) throw await failure(response);
    const type = response.headers.get('Content-Type') ?? '';
    const result = type.startsWith('application/octet-stream') ? decodeFrame(await response.arrayBuffer()) : await response.json();
    if (this.controller === controller) this.controller = null;
    return result;
  }
  /** POST params and download the reply as a file. */
  async download(params, fallbackName) {
    const { response } = await this.fetch(params);
    const disposition = response.headers.get('Content-Disposition') ?? '';
    const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? fallbackName;
    const url = URL.createObjectURL(await response.blob());
    const a = Object.assign(document.createElement('a'), { href: url, download: name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }
}

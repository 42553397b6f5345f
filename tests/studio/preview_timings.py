#!/usr/bin/env python3
"""The server's side of the plant's first view (docs/studio.md, L-system latency).

Starts `procgen serve` for each binary given, then, in rounds that alternate
the binaries (so they share the machine's load), posts plant-2d (n=7) to
POST /api/lsystem/stream with a view like the tab's after Fit (900 x 760
pixels, half-pixel cells) and prints the medians of the preview's timings.

    python3 tests/studio/preview_timings.py build/procgen [other/procgen ...] [--rounds 3] [--requests 4]
        [--cell 0.5] [--threads N]

--cell sets the grid's cell in pixels (the tab's 0.5; 4 merges most of the
plant's segments into their neighbours' cells), --threads the request's
thread count (default: the server's).
"""
import argparse
import json
import math
import os
import statistics
import struct
import subprocess
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEYS = ['interpret_ms', 'lod_merge_ms', 'lod_cover_ms', 'lod_ms', 'encode_ms', 'total_ms']


def post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={'Content-Type': 'application/json'})
    data = urllib.request.urlopen(request).read()
    headers, at = [], 0
    while at < len(data):  # "PGF1" | u32 header bytes | u64 body bytes | header | pad to 8 | body
        header_bytes, body_bytes = struct.unpack_from('<IQ', data, at + 4)
        headers.append(json.loads(data[at + 16:at + 16 + header_bytes]))
        at += ((16 + header_bytes + 7) & ~7) + body_bytes
    return headers


def start(binary):
    proc = subprocess.Popen([binary, 'serve', '--port', '0', '--quiet'], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()  # "procgen studio: http://127.0.0.1:PORT/"
    return proc, line.split()[-1].rstrip('/')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('binaries', nargs='+')
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--requests', type=int, default=4)
    parser.add_argument('--cell', type=float, default=0.5)
    parser.add_argument('--threads', type=int)
    args = parser.parse_args()
    text = open(os.path.join(ROOT, 'examples/lsystems/plant-2d.l')).read()
    servers = [start(b) for b in args.binaries]
    try:
        # The view the tab has after Fit (viewer.js: fov 40°, the bounds' half diagonal at 1.05×), looking down -z.
        x0, y0, _, x1, y1, _ = post(servers[0][1] + '/api/lsystem/geometry', {'text': text})[0]['bounds']
        width, height = 900, 760
        sy = math.cos(math.radians(20)) / (1.05 * math.hypot(x1 - x0, y1 - y0) / 2)
        sx = sy * height / width
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        view = {'width': width, 'height': height, 'cell': args.cell,
                'matrix': [sx, 0, 0, 0, 0, sy, 0, 0, 0, 0, 1, 0, -cx * sx, -cy * sy, 0, 1]}
        for round_ in range(args.rounds):
            for binary, (_, url) in zip(args.binaries, servers):
                body = {'text': text, 'view': view}
                if args.threads:
                    body['threads'] = args.threads
                rows = [post(url + '/api/lsystem/stream', body)[0] for _ in range(args.requests)]
                assert all(r['final'] is False for r in rows), 'no preview'
                medians = {k: round(statistics.median(r['timings'][k] for r in rows), 1) for k in KEYS}
                lod = rows[0]['lod']
                print(json.dumps({'round': round_ + 1, 'binary': binary, 'preview_segments': lod['segments'],
                                  'merged': lod['merged'], 'covered': lod['covered'],
                                  'load': round(os.getloadavg()[0], 1), **medians}))
    finally:
        for proc, _ in servers:
            proc.terminate()
            proc.wait()


if __name__ == '__main__':
    main()

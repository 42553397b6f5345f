// Output writers into memory (the server's path: no file system in the
// figures): every geometry format over a long polyline, and PNG encoding of
// 8-bit RGB and 16-bit gray images. Items are segments or pixels; bytes are
// the output's size.
#include <benchmark/benchmark.h>

#include <cmath>

#include "procgen/io.hpp"

namespace {

using namespace procgen;

// A connected zig-zag of `n` segments in the XY plane with colours changing
// every 64 segments and a leaf polygon every 256 — the shape of turtle output.
Geometry polyline(size_t n) {
  Geometry g;
  Vec3 p{0, 0, 0};
  for (size_t i = 0; i < n; ++i) {
    Segment s;
    s.start = p;
    p = {p.x + 0.01f, std::sin(float(i) * 0.1f), 0.0f};
    s.end = p;
    s.width = 0.002f;
    s.color = int32_t(i / 64 % 4);
    g.segments.push_back(s);
    if (i % 256 == 0) {
      for (Vec3 v : {p, Vec3{p.x + 0.01f, p.y + 0.02f, 0}, Vec3{p.x - 0.01f, p.y + 0.02f, 0}})
        g.polygon_vertices.push_back(v);
      g.polygon_offsets.push_back(g.polygon_vertices.size());
      g.polygon_colors.push_back(1);
      g.polygon_instances.push_back(0);
    }
  }
  return g;
}

void BM_EncodeGeometry(benchmark::State& state, GeometryFormat format, bool cylinders) {
  const Geometry g = polyline(size_t(state.range(0)));
  WriteOptions options;
  options.cylinders = cylinders;
  size_t bytes = 0;
  for (auto _ : state) {
    std::vector<uint8_t> out = encodeGeometry(g, format, options);
    bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
}
BENCHMARK_CAPTURE(BM_EncodeGeometry, obj, GeometryFormat::kObj, false)->Arg(1 << 18)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EncodeGeometry, ply, GeometryFormat::kPly, false)->Arg(1 << 18)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EncodeGeometry, ply_tubes, GeometryFormat::kPly, true)->Arg(1 << 16)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EncodeGeometry, glb, GeometryFormat::kGlb, false)->Arg(1 << 18)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EncodeGeometry, svg, GeometryFormat::kSvg, false)->Arg(1 << 18)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EncodeGeometry, png, GeometryFormat::kPng, false)->Arg(1 << 18)->Unit(benchmark::kMillisecond);

void BM_EncodePng(benchmark::State& state, int channels, int bit_depth) {
  const int side = int(state.range(0));
  const size_t samples = size_t(side) * size_t(side) * size_t(channels);
  std::vector<uint16_t> wide(samples);
  std::vector<uint8_t> narrow(samples);
  for (size_t i = 0; i < samples; ++i) {  // smooth gradients, like terrain or renders
    const size_t x = i / size_t(channels) % size_t(side), y = i / size_t(channels) / size_t(side);
    wide[i] = uint16_t((x * 37 + y * 11) & 0xFFFF);
    narrow[i] = uint8_t((x + y) & 0xFF);
  }
  const ImageView view{bit_depth == 16 ? static_cast<const void*>(wide.data()) : narrow.data(), side, side, channels,
                       bit_depth, 0};
  for (auto _ : state) {
    std::vector<uint8_t> out = encodePng(view);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * side * side);
}
BENCHMARK_CAPTURE(BM_EncodePng, rgb8, 3, 8)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EncodePng, gray16, 1, 16)->Arg(1024)->Unit(benchmark::kMillisecond);

}  // namespace

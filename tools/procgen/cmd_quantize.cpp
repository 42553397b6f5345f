// procgen quantize IN.png --colors K -o OUT.png: octree colour quantization
// (procgen/quantize.hpp; Gervautz and Purgathofer 1988, the seed's colour
// quantization application, issue 18 point 6). Thin: read, quantize, write.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

#include "cli.hpp"
#include "output_options.hpp"
#include "procgen/png_decoder.hpp"
#include "procgen/quantize.hpp"

namespace procgen::cli {
namespace {

struct QuantizeArgs {
  std::string input;
  uint32_t colors = 256;
  bool dither = false;
  bool quiet = false;
  CommandOutputs outputs;
  ExecutionOptions execution;
};

const char* pngTypeName(int color_type) {
  switch (color_type) {
    case 3: return "palette";
    case 6: return "rgba";
    default: return "rgb";
  }
}

void runQuantize(const QuantizeArgs& a) {
  using Clock = std::chrono::steady_clock;
  if (a.outputs.paths.empty() && a.outputs.stats_json.empty())
    throw Error("give -o OUT.png (or --stats-json) for the result", ExitCode::kUsage);
  for (const std::string& path : a.outputs.paths)
    if (path != "-" && extensionOf(path) != ".png")
      throw Error("-o " + path + ": quantize writes PNG only (give a .png path or '-')", ExitCode::kUsage);
  const Execution execution = a.execution.resolve();

  const auto t0 = Clock::now();
  PngSourceFormat source;
  const Rgb8Image image = readPng(a.input, 0, &source);
  const auto t1 = Clock::now();
  QuantizeOptions options;
  options.colors = a.colors;
  options.dither = a.dither;
  const QuantizedImage q = quantizeOctree(image.view(), options, execution);
  const auto t2 = Clock::now();
  int png_type = 3;
  for (const std::string& path : a.outputs.paths) {
    std::unique_ptr<ByteSink> sink = openOutput(path);
    PngOptions png;
    png.srgb = true;  // a picture for screens
    png_type = encodeQuantizedPng(q, *sink, png);
  }
  const std::vector<uint8_t> result = expandQuantized(q);
  const double mse = imageMeanSquaredError(image.view(), {result.data(), q.width, q.height, q.has_alpha ? 4 : 3, 8, 0});
  const double psnr = peakSignalToNoise(mse);
  const double read_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  const double ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
  Json j;
  j["width"] = q.width;
  j["height"] = q.height;
  j["requested_colors"] = a.colors;
  j["colors"] = q.colors();
  j["unique_input_colors"] = q.unique_input_colors;
  j["alpha"] = q.has_alpha;
  j["dither"] = a.dither;
  j["mse"] = mse;
  if (std::isfinite(psnr)) j["psnr"] = psnr;
  else j["psnr"] = nullptr;  // identical images
  j["read_ms"] = read_ms;
  j["ms"] = ms;
  j["png_type"] = pngTypeName(png_type);
  j["backend"] = std::string(backendName(execution.backend));
  j["threads"] = effectiveThreads(execution);
  a.outputs.writeStats(j);
  if (!a.quiet)
    std::fprintf(stderr, "%dx%d, %llu colours -> %u in %.1f ms, PSNR %.2f dB\n", q.width, q.height,
                 static_cast<unsigned long long>(q.unique_input_colors), q.colors(), ms, psnr);
}

void setupQuantize(CLI::App& app) {
  auto a = std::make_shared<QuantizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "quantize", "Octree colour quantization of a PNG to at most K colours (Gervautz & Purgathofer; docs/octree.md)");
  cmd->footer(
      "Any PNG is read (8/16-bit gray, gray+alpha, RGB, RGBA, palette) as 8-bit RGB(A); alpha is kept.\n"
      "The output is a palette PNG when at most 256 entries suffice, else 8-bit RGB(A).\n"
      "Example:\n  procgen quantize photo.png --colors 16 --dither -o photo16.png --stats-json -");
  cmd->add_option("IN", a->input, "Input PNG")->required();
  addInteger(*cmd, "--colors,-k", a->colors, "Most colours of the palette (1..16777216)", 1u, 1u << 24)
      ->capture_default_str();
  cmd->add_flag("--dither", a->dither, "Floyd-Steinberg error diffusion");
  cmd->add_flag("--quiet,-q", a->quiet, "No summary line on stderr");
  a->outputs.addOutputs(*cmd, "Write the quantized PNG ('-' = stdout)");
  a->outputs.addStatsJson(*cmd,
                          "Write width, height, colors, unique_input_colors, mse, psnr, ms, ... as one JSON "
                          "object to PATH ('-' = stdout)");
  a->execution.add(*cmd);
  cmd->callback([a] { runQuantize(*a); });
}

}  // namespace

PROCGEN_REGISTER_COMMAND(28, setupQuantize);

}  // namespace procgen::cli

// The studio's flame endpoints (issue 20 point 4): the flame seed's
// interactive use — "changes all parameters in real-time and observes their
// effects" with progressive rendering (Schied et al., shared/seeds/003_*.txt,
// "Rendering") — over the library's reader (procgen/flame.hpp) and renderer
// (procgen/flame_render.hpp). docs/studio.md "### Flame" lists the parameters.
//
//   POST /api/flame/genome  {genome}  → JSON: each flame's values for the
//        page's sliders, or a parse error at line:col.
//   POST /api/flame/render  {genome, flame, width, height, quality, passes, …}
//        → a stream of frames, one per pass. The chaos game runs in passes
//        whose qualities double (1, 2, 4, … parts of the total), each pass
//        with its own random stream (seed, pass); the histograms are summed,
//        and after every pass the sum is tone mapped as a render of the
//        quality so far and sent as a PNG — the image refines while it
//        accumulates, as flam3's batches do. One pass is renderFlame exactly.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "procgen/budget.hpp"
#include "procgen/flame.hpp"
#include "procgen/flame_render.hpp"
#include "procgen/image.hpp"
#include "studio/api.hpp"

namespace procgen::studio {

namespace {

constexpr size_t kMaxGenomeBytes = 4u << 20;
/// Largest side of a studio render; the histogram must also fit the job's budget.
constexpr int kMaxSide = 2048;
constexpr int kMaxPasses = 12;
constexpr double kMaxQuality = 2000;
/// A pass plots at least this many points: small renders get fewer passes
/// rather than frames of a few hundred samples.
constexpr double kMinPassSamples = 65536;
/// The file name parse errors carry.
constexpr const char* kGenomeName = "genome";
/// zlib levels: the frames in between are replaced within a moment (speed
/// first); the last one is the image the page saves (image.hpp: level 4 is
/// within 3% of level 6's size on flames in half the time).
constexpr int kDraftPngLevel = 1, kFinalPngLevel = 4;

struct Genomes {
  std::string text;
  std::vector<FlameGenome> flames;
  std::vector<std::string> warnings;
};

Genomes readGenomes(const Params& params) {
  if (!params.has("genome")) throw BadRequest("'genome' (the flam3 XML text) is required");
  Genomes g;
  g.text = params.string("genome", "", kMaxGenomeBytes);
  FlameReadOptions read;
  read.skip_unknown = params.boolean("skip_unknown", false);
  read.warn = [&g](const std::string& message) {
    if (g.warnings.size() < 32) g.warnings.push_back(message);
  };
  g.flames = parseFlameGenomes(g.text, kGenomeName, read);
  return g;
}

json affineJson(const FlameAffine& a) {
  return json::array({a.a, a.b, a.c, a.d, a.e, a.f});
}

json xformJson(const FlameXform& xf, int element) {
  json variations = json::array();
  for (const FlameVariationTerm& v : xf.variations)
    variations.push_back({{"name", flameVariationName(v.index)}, {"weight", v.weight}});
  json out = {{"weight", xf.weight},           {"color", xf.color},
              {"color_speed", xf.color_speed}, {"opacity", xf.opacity},
              {"line", xf.source_line},        {"variations", std::move(variations)},
              {"coefs", affineJson(xf.affine)}};
  if (!xf.post.isIdentity()) out["post"] = affineJson(xf.post);
  // The page edits the element: its index among the flame's <xform>s, or
  // null for the xforms <symmetry> added (they have no element to edit).
  out["element"] = element >= 0 ? json(element) : json(nullptr);
  return out;
}

/// The palette as 256 "rrggbb" hex triples, one string (alpha left out:
/// flam3 palettes are opaque unless a genome says otherwise).
std::string paletteHex(const FlameGenome& g) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(256 * 6);
  for (const auto& rgba : g.palette)
    for (int c = 0; c < 3; ++c) {
      const int v = static_cast<int>(std::lround(std::clamp(rgba[static_cast<size_t>(c)], 0.0, 1.0) * 255.0));
      hex.push_back(kHex[v >> 4]);
      hex.push_back(kHex[v & 15]);
    }
  return hex;
}

json flameJson(const FlameGenome& g, int index) {
  json xforms = json::array();
  int element = 0;
  for (const FlameXform& xf : g.xforms)
    xforms.push_back(xformJson(xf, xf.added_by_symmetry ? -1 : element++));
  return {{"index", index},
          {"name", g.name},
          {"line", g.source_line},
          {"size", {g.width, g.height}},
          {"center", {g.center_x, g.center_y}},
          {"scale", g.scale},
          {"zoom", g.zoom},
          {"rotate", g.rotate},
          {"quality", g.quality},
          {"supersample", g.supersample},
          {"gamma", g.gamma},
          {"gamma_threshold", g.gamma_threshold},
          {"brightness", g.brightness},
          {"vibrancy", g.vibrancy},
          {"highlight_power", g.highlight_power},
          {"background", g.background},
          {"estimator_radius", g.estimator_radius},
          {"palette", paletteHex(g)},
          {"palette_index", g.palette_index},
          {"symmetry_kind", g.symmetry_kind},
          {"xforms", std::move(xforms)},
          {"final_xform", g.final_xform ? xformJson(*g.final_xform, 0) : json(nullptr)}};
}

/// splitmix64's finalizer: pass k > 0 draws from the Philox key of
/// mix(seed + k), an independent stream that no other (seed, pass) of a
/// nearby seed shares; pass 0 keeps `seed`, so a one-pass render is renderFlame.
uint64_t passSeed(uint64_t seed, int pass) {
  if (pass == 0) return seed;
  uint64_t z = seed + static_cast<uint64_t>(pass) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// The render request, checked.
struct RenderRequest {
  Genomes genomes;
  int flame = 0;
  FlameRenderOptions options;  ///< quality = the total; seed = the request's
  int passes = 1;
  Execution execution;
};

RenderRequest readRenderRequest(const Request& request, const Job& job) {
  const Params& p = request.params;
  RenderRequest r;
  // Parameters first: a typo is reported before the genome is parsed.
  const int64_t flame = p.integer("flame", 0, 0, 1 << 20);
  const bool sized = p.has("width") || p.has("height");
  if (sized && !(p.has("width") && p.has("height")))
    throw BadRequest("give both 'width' and 'height', or neither");
  const int width = static_cast<int>(p.integer("width", 0, 1, kMaxSide));
  const int height = static_cast<int>(p.integer("height", 0, 1, kMaxSide));
  const bool has_quality = p.has("quality");
  const double quality = p.number("quality", 1, 0.01, kMaxQuality);
  const int requested_passes = static_cast<int>(p.integer("passes", 6, 1, kMaxPasses));
  r.options.seed = p.seed("seed", 1);
  r.options.method = p.choice("method", "presorted", {"presorted", "naive"}) == "naive"
                         ? FlameMethod::kNaive
                         : FlameMethod::kPresorted;
  if (p.has("supersample")) r.options.supersample = static_cast<int>(p.integer("supersample", 1, 1, 4));
  r.options.earlyclip = p.boolean("earlyclip", false);
  r.execution = job.execution(p);

  r.genomes = readGenomes(p);
  const int count = static_cast<int>(r.genomes.flames.size());
  if (flame >= count)
    throw BadRequest("'flame' is " + std::to_string(flame) + " but the genome has " + std::to_string(count) +
                     " flame" + (count == 1 ? "" : "s") + " (0.." + std::to_string(count - 1) + ")");
  r.flame = static_cast<int>(flame);
  const FlameGenome& genome = r.genomes.flames[static_cast<size_t>(r.flame)];
  if (sized) {
    r.options.width = width;
    r.options.height = height;
  } else if (genome.width > kMaxSide || genome.height > kMaxSide) {
    throw BadRequest("the flame's size is " + std::to_string(genome.width) + "x" +
                     std::to_string(genome.height) + "; the studio renders at most " +
                     std::to_string(kMaxSide) + " per side: give 'width' and 'height'");
  }
  r.options.quality = has_quality ? quality : genome.quality;
  if (!(*r.options.quality > 0 && *r.options.quality <= kMaxQuality))
    throw BadRequest("the flame's quality is outside (0, " + std::to_string(int(kMaxQuality)) +
                     "]: give 'quality'");

  // The whole render's layout now: a genome whose camera or filter the
  // renderer refuses fails at its <flame> line before anything is allocated;
  // the pass histogram and the sum each get half the job's budget.
  FlameRenderOptions whole = r.options;
  whole.memory_budget = std::max<uint64_t>(1, job.memoryBudget() / 2);
  FlameHistogramLayout layout;
  try {
    layout = flameHistogramLayout(genome, whole);
  } catch (const ResourceError&) {
    throw;
  } catch (const ParseError&) {
    throw;
  } catch (const Error& e) {
    if (e.exitCode() != ExitCode::kUsage) throw;
    std::string message = e.what();
    if (message.rfind("flame: ", 0) == 0) message.erase(0, 7);
    throw flameGenomeError(kGenomeName, r.genomes.text, genome, r.flame, message);
  }
  // Doubling passes: the first has total / (2^passes − 1) of the samples.
  r.passes = requested_passes;
  while (r.passes > 1 &&
         static_cast<double>(layout.samples) / (std::ldexp(1.0, r.passes) - 1) < kMinPassSamples)
    --r.passes;
  return r;
}

std::vector<uint8_t> encodeFlamePng(const FlameImage& image, int level) {
  ImageView view;
  view.pixels = image.pixels8.data();
  view.width = image.width;
  view.height = image.height;
  view.channels = image.channels;
  view.bit_depth = 8;
  PngOptions png;
  png.srgb = true;  // display-referred colour (flam3's gamma is applied)
  png.compression_level = level;
  return encodePng(view, png);
}

double msBetween(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

void renderPasses(const RenderRequest& r, Job& job, FrameStream& stream);

/// Checks the request (parameters, genome, camera, budget: plain 4xx replies)
/// and returns the passes.
FrameProducer renderProgressively(const Request& request, Job& job) {
  return [r = readRenderRequest(request, job), &job](FrameStream& stream) { renderPasses(r, job, stream); };
}

void renderPasses(const RenderRequest& r, Job& job, FrameStream& stream) {
  using Clock = std::chrono::steady_clock;
  const FlameGenome& genome = r.genomes.flames[static_cast<size_t>(r.flame)];
  const double total_quality = *r.options.quality;
  const uint64_t budget = job.memoryBudget();
  const double parts = std::ldexp(1.0, r.passes) - 1;  // 1 + 2 + … + 2^(passes−1)

  FlameHistogram sum;
  double quality_so_far = 0;
  for (int pass = 0; pass < r.passes; ++pass) {
    job.check();
    FlameRenderOptions options = r.options;
    const bool last = pass + 1 == r.passes;
    options.quality = last ? total_quality - quality_so_far : total_quality * std::ldexp(1.0, pass) / parts;
    options.seed = passSeed(r.options.seed, pass);
    options.memory_budget = std::max<uint64_t>(1, budget / 2);
    options.progress = [&job](double) { job.check(); };  // an edit or the deadline stops the pass

    const Clock::time_point t0 = Clock::now();
    FlameHistogram histogram = iterateFlame(genome, options, r.execution);
    const Clock::time_point t1 = Clock::now();
    quality_so_far = last ? total_quality : quality_so_far + *options.quality;
    if (pass == 0) {
      sum = std::move(histogram);
    } else {
      for (size_t i = 0; i < sum.buckets.size(); ++i) {
        FlameBucket& s = sum.buckets[i];
        const FlameBucket& b = histogram.buckets[i];
        s.red += b.red, s.green += b.green, s.blue += b.blue, s.alpha += b.alpha, s.count += b.count;
      }
      sum.samples += histogram.samples;
      sum.bad_values += histogram.bad_values;
      sum.iterations += histogram.iterations;
      histogram = {};  // the tone mapping's buffers take its place
    }
    job.check();
    // The sum is a render of the quality so far: its layout's sample density
    // is what the log-density scale divides by.
    FlameRenderOptions so_far = r.options;
    so_far.quality = quality_so_far;
    so_far.memory_budget = std::max<uint64_t>(1, budget / 2);
    sum.layout = flameHistogramLayout(genome, so_far);
    const uint64_t held = sum.buckets.size() * sizeof(FlameBucket);
    so_far.memory_budget = budget > held ? budget - held : 1;
    FlameImage image;
    try {
      image = toneMapFlame(genome, sum, so_far, r.execution);
    } catch (const ResourceError&) {
      throw;
    } catch (const Error& e) {
      if (e.exitCode() != ExitCode::kBadInput) throw;  // genome values flam3 refuses (gamma ≤ 0, …)
      std::string message = e.what();
      if (message.rfind("flame: ", 0) == 0) message.erase(0, 7);
      throw flameGenomeError(kGenomeName, r.genomes.text, genome, r.flame, message);
    }
    const Clock::time_point t2 = Clock::now();
    const std::vector<uint8_t> png = encodeFlamePng(image, last ? kFinalPngLevel : kDraftPngLevel);
    const Clock::time_point t3 = Clock::now();

    Frame frame;
    frame.header = {{"kind", "flame"},
                    {"flame", r.flame},
                    {"name", genome.name},
                    {"pass", pass + 1},
                    {"passes", r.passes},
                    {"final", last},
                    {"width", image.width},
                    {"height", image.height},
                    {"samples", sum.samples},
                    {"bad_values", sum.bad_values},
                    {"quality_so_far", quality_so_far},
                    {"quality", total_quality},
                    {"seed", options.seed},
                    {"iter_ms", msBetween(t0, t1)},
                    {"tonemap_ms", msBetween(t1, t2)},
                    {"png_ms", msBetween(t2, t3)},
                    {"total_ms", job.elapsedMs()},
                    {"backend", backendName(r.execution.backend)},
                    {"threads", effectiveThreads(r.execution)}};
    if (pass == 0 && !r.genomes.warnings.empty()) frame.header["warnings"] = r.genomes.warnings;
    frame.add("png", png);
    stream.send(frame);
  }
}

}  // namespace

void registerFlameEndpoints(Api& api) {
  api.compute("/api/flame/genome", "flame.genome", [](const Request& request, Job&) {
    const Genomes genomes = readGenomes(request.params);
    json flames = json::array();
    for (size_t i = 0; i < genomes.flames.size(); ++i) flames.push_back(flameJson(genomes.flames[i], int(i)));
    return Reply::ofJson({{"flames", std::move(flames)}, {"warnings", genomes.warnings}});
  });
  api.stream("/api/flame/render", "flame.render", renderProgressively);
}

}  // namespace procgen::studio

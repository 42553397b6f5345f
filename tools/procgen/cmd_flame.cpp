// procgen flame GENOME and procgen flam3-render: fractal flames (issue 19
// point 4) from flam3 genomes (procgen/flame.hpp) rendered by the library
// (procgen/flame_render.hpp) to PNG.
//
// `procgen flame` is the house-style command (options, --stats-json, exit
// codes); `procgen flam3-render` is flam3-render's interface — genomes on
// stdin or in=, everything else from environment variables (flam3 3.1.1
// flam3-render.c), so scripts written for flam3 run unchanged.
//
// Both read the whole genome file first, then resolve every flame's camera
// and histogram (flameHistogramLayout) before rendering any: a genome whose
// size, quality or memory would be refused stops the run before anything is
// allocated or written, and main.cpp's OutputTransaction removes the images
// of earlier flames when a later one fails, so a failed run leaves no file.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cli.hpp"
#include "lsystem_options.hpp"  // addMemoryBudgetOption
#include "output_options.hpp"
#include "procgen/budget.hpp"
#include "procgen/distributed.hpp"
#include "procgen/flame.hpp"
#include "procgen/flame_render.hpp"
#include "procgen/image.hpp"
#include "procgen/input.hpp"

namespace procgen::cli {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

[[noreturn]] void usage(const std::string& message) {
  throw Error(message, ExitCode::kUsage);
}

/// A flame's name for messages: `flame 3 'name'` (index in the file).
std::string describe(const FlameGenome& genome, int index) {
  std::string s = "flame " + std::to_string(index);
  if (!genome.name.empty()) s += " '" + printableText(genome.name, 60) + "'";
  return s;
}

/// `prefix: ` removed from a library message ("flame: quality must be …").
std::string withoutPrefix(const std::string& message, const std::string& prefix) {
  return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

/// A progress bar on stderr, drawn once the run has taken a second (and only
/// when enabled: stderr is a terminal and the run is not quiet); cleared
/// before anything else is printed.
class ProgressBar {
 public:
  ProgressBar(bool enabled, Clock::time_point run_start) : enabled_(enabled), start_(run_start) {}
  void update(const std::string& label, double fraction) {
    if (!enabled_ || Clock::now() - start_ < std::chrono::seconds(1)) return;
    fraction = std::isfinite(fraction) ? std::min(1.0, std::max(0.0, fraction)) : 0.0;
    constexpr int kBar = 30;
    const int filled = static_cast<int>(fraction * kBar);
    const std::string bar = std::string(size_t(filled), '#') + std::string(size_t(kBar - filled), '.');
    std::fprintf(stderr, "\r%-40.40s [%s] %3d%%", label.c_str(), bar.c_str(),
                 static_cast<int>(fraction * 100));
    shown_ = true;
  }
  void clear() {
    if (shown_) std::fprintf(stderr, "\r%80s\r", "");
    shown_ = false;
  }

 private:
  bool enabled_;
  Clock::time_point start_;
  bool shown_ = false;
};

/// zlib level of flame PNGs. Measured on 1280×720 flames (mixed.flam3 #0,
/// trig.flam3 #1): level 4 writes 3% more bytes than libpng's usual 6 in 45%
/// of the time (76 vs 171 ms); level 1 15% more in 26%. Flames are noisy
/// images that level 6's longer match search barely shrinks.
constexpr int kFlamePngLevel = 4;

/// One image to render: the flame, its index in the file and its output path.
struct FlameTarget {
  const FlameGenome* genome = nullptr;
  int index = 0;
  std::string path;
};

/// Everything a run needs; both commands fill one and call renderFlames.
struct FlameRun {
  std::string file;  ///< the genome file's name in messages
  std::string text;  ///< its contents (for the lines of diagnostics)
  std::vector<FlameGenome> genomes;
  std::vector<FlameTarget> targets;
  FlameRenderOptions options;
  Execution execution;
  Clock::time_point start = Clock::now();
  bool progress = false;  ///< draw the progress bar
  int png_level = kFlamePngLevel;  ///< zlib level of the PNGs
  /// Called before and after each flame (flam3-render's verbose lines).
  std::function<void(const FlameTarget&, size_t k)> before, after;
};

struct FlameTotals {
  size_t flames = 0;
  int width = 0, height = 0;  ///< the first image's
  uint64_t samples = 0, bad_values = 0;
  double iter_ms = 0, filter_ms = 0, total_ms = 0;
};

/// Reads `path` ("-" or "/dev/stdin": standard input) and parses every flame.
void readGenomes(FlameRun& run, const std::string& path, const FlameReadOptions& read) {
  const bool stdin_input = path == "-" || path == "/dev/stdin";
  run.file = stdin_input ? "<stdin>" : path;
  run.text = readInputFile(stdin_input ? "/dev/stdin" : path, "flame genome");
  run.genomes = parseFlameGenomes(run.text, run.file, read);
}

/// Resolves every target's camera before anything is rendered: errors name
/// the genome's file and line (exit 2).
void checkLayouts(const FlameRun& run) {
  for (const FlameTarget& t : run.targets) {
    try {
      (void)flameHistogramLayout(*t.genome, run.options);
    } catch (const ParseError&) {
      throw;
    } catch (const ResourceError& e) {
      throw flameGenomeError(run.file, run.text, *t.genome, t.index, e.what());
    } catch (const Error& e) {
      if (e.exitCode() != ExitCode::kUsage) throw;
      throw flameGenomeError(run.file, run.text, *t.genome, t.index, withoutPrefix(e.what(), "flame: "));
    }
  }
}

void writeFlamePng(const FlameImage& image, const std::string& path, int level) {
  ImageView view;
  view.pixels = image.bits_per_channel == 16 ? static_cast<const void*>(image.pixels16.data())
                                             : static_cast<const void*>(image.pixels8.data());
  view.width = image.width;
  view.height = image.height;
  view.channels = image.channels;
  view.bit_depth = image.bits_per_channel;
  PngOptions png;
  png.srgb = true;  // display-referred colour (flam3's gamma is applied)
  png.compression_level = level;
  std::unique_ptr<ByteSink> sink = openOutput(path);
  encodePng(view, *sink, png);
}

/// Renders the targets. Under mpirun (procgen/distributed.hpp) several
/// targets are spread over the ranks (target k on rank k mod R, each rank
/// writing its own images); one target is rendered by all ranks together
/// (renderFlameAcrossRanks) and written by rank 0. Totals are the job's.
FlameTotals renderFlames(FlameRun& run) {
  checkLayouts(run);
  const int ranks = distributed::size(), me = distributed::rank();
  const bool spread = ranks > 1 && run.targets.size() > 1;
  FlameTotals totals;
  ProgressBar bar(run.progress && me == 0, run.start);
  for (size_t k = 0; k < run.targets.size(); ++k) {
    if (spread && static_cast<int>(k % size_t(ranks)) != me) continue;
    const FlameTarget& t = run.targets[k];
    if (run.before) run.before(t, k);
    FlameRenderOptions options = run.options;
    const std::string label =
        describe(*t.genome, t.index) + (run.targets.size() > 1 ? " (" + std::to_string(k + 1) + "/" +
                                                                     std::to_string(run.targets.size()) + ")"
                                                               : "");
    options.progress = [&](double fraction) { bar.update(label, fraction); };
    FlameRenderStats stats;
    FlameImage image;
    try {
      image = spread ? renderFlame(*t.genome, options, run.execution, &stats)
                     : renderFlameAcrossRanks(*t.genome, options, run.execution, &stats);
    } catch (const ResourceError& e) {  // the tone-mapping buffers, beside the histogram
      bar.clear();
      throw flameGenomeError(run.file, run.text, *t.genome, t.index, e.what());
    }
    bar.clear();
    const bool writes = spread || me == 0;
    if (writes) writeFlamePng(image, t.path, run.png_level);
    if (k == 0) {
      totals.width = image.width;
      totals.height = image.height;
    }
    if (writes) ++totals.flames;
    totals.samples += writes ? stats.samples : 0;
    totals.bad_values += writes ? stats.bad_values : 0;
    totals.iter_ms += writes ? stats.iter_ms : 0;
    totals.filter_ms += writes ? stats.filter_ms : 0;
    if (run.after && writes) run.after(t, k);
  }
  // The job's totals on rank 0 (sums over the ranks' images; rank 0 drew the first).
  uint64_t counts[3] = {totals.flames, totals.samples, totals.bad_values};
  double times[2] = {totals.iter_ms, totals.filter_ms};
  distributed::allReduce(std::span<uint64_t>(counts, 3), distributed::ReduceOp::kSum);
  distributed::allReduce(std::span<double>(times, 2), distributed::ReduceOp::kSum);
  totals.flames = counts[0];
  totals.samples = counts[1];
  totals.bad_values = counts[2];
  totals.iter_ms = times[0];
  totals.filter_ms = times[1];
  totals.total_ms = msSince(run.start);
  return totals;
}

double msamplesPerSecond(const FlameTotals& t) {
  return t.iter_ms > 0 ? static_cast<double>(t.samples) / (t.iter_ms * 1e3) : 0.0;
}

// --- procgen flame --------------------------------------------------------

struct FlameArgs {
  std::string genome;
  std::optional<int> index;
  std::optional<double> quality;
  std::string size;
  std::optional<int> supersample;
  uint64_t seed = 1;
  std::string method = "presorted";
  ExecutionOptions execution;
  CommandOutputs outputs;
  int bpc = 8;
  int png_level = kFlamePngLevel;
  bool transparency = false, earlyclip = false, skip_unknown = false, quiet = false;
  uint64_t memory_budget = 0;
};

/// "WxH" with both in 1 .. 2^20 (the renderer's limit), else a usage error.
std::pair<int, int> parseSize(const std::string& text) {
  const size_t x = text.find('x');
  auto side = [&](const std::string& s) {
    if (s.empty() || s.size() > 7 || s.find_first_not_of("0123456789") != std::string::npos)
      usage("--size: '" + printableText(text, 40) + "' is not WxH (e.g. 1280x720)");
    const long v = std::stol(s);
    if (v < 1 || v > (1 << 20)) usage("--size: each side must be 1 .. 1048576, not " + s);
    return static_cast<int>(v);
  };
  if (x == std::string::npos) usage("--size: '" + printableText(text, 40) + "' is not WxH (e.g. 1280x720)");
  return {side(text.substr(0, x)), side(text.substr(x + 1))};
}

/// OUT with the flame's index: out.png → out-00003.png (flam3-render's %05d).
std::string numberedPath(const std::string& out, int index) {
  const std::filesystem::path p(out);
  char number[16];
  std::snprintf(number, sizeof number, "-%05d", index);
  return (p.parent_path() / (p.stem().string() + number + p.extension().string())).string();
}

void runFlame(FlameArgs& a) {
  const Clock::time_point start = Clock::now();
  // Options first: a typo fails before the genome is read.
  if (a.outputs.paths.size() != 1) usage("give one -o OUT.png");
  const std::string out = a.outputs.paths.front();
  if (out != "-" && extensionOf(out) != ".png") usage("-o " + out + ": flames are written as .png");
  if (a.quality && !(std::isfinite(*a.quality) && *a.quality > 0))
    usage("--quality must be positive and finite");
  if (a.bpc != 8 && a.bpc != 16) usage("--bpc must be 8 or 16");
  FlameRun run;
  run.start = start;
  run.options.quality = a.quality;
  if (!a.size.empty()) std::tie(run.options.width, run.options.height) = parseSize(a.size);
  run.options.supersample = a.supersample;
  run.options.seed = a.seed;
  run.options.method = a.method == "naive" ? FlameMethod::kNaive : FlameMethod::kPresorted;
  run.options.earlyclip = a.earlyclip;
  run.options.transparency = a.transparency;
  run.options.bits_per_channel = a.bpc;
  run.options.memory_budget = a.memory_budget;
  run.png_level = a.png_level;
  run.execution = a.execution.resolve();
  run.progress = !a.quiet && stderrIsTerminal();

  FlameReadOptions read;
  read.skip_unknown = a.skip_unknown;
  read.warn = [](const std::string& message) { std::fprintf(stderr, "%s\n", message.c_str()); };
  readGenomes(run, a.genome, read);

  const int count = static_cast<int>(run.genomes.size());
  if (a.index) {
    if (*a.index >= count)
      throw Error(run.file + " has " + std::to_string(count) + " flame" + (count == 1 ? "" : "s") +
                      " (indices 0.." + std::to_string(count - 1) + "); --index " + std::to_string(*a.index) +
                      " is not one of them",
                  ExitCode::kBadInput);
    run.targets.push_back({&run.genomes[size_t(*a.index)], *a.index, out});
  } else if (count == 1) {
    run.targets.push_back({&run.genomes[0], 0, out});
  } else {
    if (out == "-")
      usage(run.file + " has " + std::to_string(count) +
            " flames: give -o OUT.png (written as "
            "OUT-00000.png ...) or --index K to write one to standard output");
    std::vector<PlannedOutput> planned;
    for (int i = 0; i < count; ++i) {
      run.targets.push_back({&run.genomes[size_t(i)], i, numberedPath(out, i)});
      planned.push_back({run.targets.back().path,
                         run.targets.back().path + " (flame " + std::to_string(i) + " of -o " + out + ")"});
    }
    if (!a.outputs.stats_json.empty())
      planned.push_back({a.outputs.stats_json, "--stats-json " + a.outputs.stats_json});
    requireDistinctOutputs(planned);
  }

  const FlameTotals totals = renderFlames(run);
  if (!distributed::isRoot()) return;  // rank 0 reports the job

  if (!a.outputs.stats_json.empty()) {
    Json j;
    j["flames"] = totals.flames;
    j["width"] = totals.width;
    j["height"] = totals.height;
    j["samples"] = totals.samples;
    j["iter_ms"] = totals.iter_ms;
    j["filter_ms"] = totals.filter_ms;
    j["total_ms"] = totals.total_ms;
    j["msamples_per_s"] = msamplesPerSecond(totals);
    j["bad_values"] = totals.bad_values;
    j["backend"] = std::string(backendName(run.execution.backend));
    j["threads"] = effectiveThreads(run.execution);
    if (distributed::active()) j["ranks"] = distributed::size();
    a.outputs.writeStats(j);
  }
  if (!a.quiet) {
    std::fprintf(stderr,
                 "%zu flame%s, %dx%d: %.1f M samples, iterate %.1f ms (%.1f M samples/s), filter %.1f ms, "
                 "total %.1f ms",
                 totals.flames, totals.flames == 1 ? "" : "s", totals.width, totals.height,
                 static_cast<double>(totals.samples) / 1e6, totals.iter_ms, msamplesPerSecond(totals),
                 totals.filter_ms, totals.total_ms);
    if (totals.bad_values > 0) std::fprintf(stderr, ", %" PRIu64 " bad values retried", totals.bad_values);
    std::fprintf(stderr, "\n");
  }
}

void setupFlame(CLI::App& app) {
  auto a = std::make_shared<FlameArgs>();
  CLI::App* cmd = app.add_subcommand("flame", "Render fractal flames from flam3 genomes (.flam3 XML) to PNG");
  cmd->footer(
      "GENOME is a flam3 file (Apophysis, JWildfire, Chaotica, Fractorium and flam3-genome write them); - "
      "reads "
      "standard input. A file with several <flame>s and no --index writes one image per flame, numbered by "
      "its index in the file with five digits before the extension: -o out.png gives out-00000.png, "
      "out-00001.png, ... (flam3-render's %05d).\n"
      "--size WxH rescales the camera as flam3-render's ss does (the scale follows the width); --quality "
      "replaces the genome's (plotted samples = quality x width x height, as flam3). The same --seed gives "
      "identical pixels on serial and cpu at any thread count.\n"
      "--stats-json keys: flames, width, height (of the first image), samples, iter_ms, filter_ms (sums over "
      "the flames), total_ms (the whole run: reading, rendering, writing), msamples_per_s (samples / "
      "iter_ms), "
      "bad_values, backend, threads.\n"
      "Errors: file:line:col: error: ... with exit 2 for malformed genomes, unknown variations (a warning "
      "with "
      "--skip-unknown) and flames whose histogram exceeds the memory budget (refused before allocating); "
      "nothing is written when any flame fails.\n"
      "Examples:\n  procgen flame examples/flames/mixed.flam3 --index 0 -o mixed.png\n"
      "  procgen flame /usr/share/flam3/test.flam3 --size 1280x720 --quality 50 --backend cpu -o test.png\n"
      "flam3-render's own interface (environment variables): procgen flam3-render");
  cmd->add_option("GENOME", a->genome, "flam3 genome file, or - for standard input")
      ->required()
      ->group("Input");
  addInteger(*cmd, "--index", a->index, "Render only the flame with this index in the file (0-based)", 0)
      ->group("Input");
  cmd->add_flag("--skip-unknown", a->skip_unknown,
                "Unknown variation attributes are a warning and ignored (flam3's behaviour), not an error")
      ->group("Input");
  cmd->add_option("--quality", a->quality, "Samples per output pixel (default: the genome's quality)")
      ->group("Render");
  cmd->add_option("--size", a->size,
                  "Output size WxH; the camera scale follows the width (default: the genome's)")
      ->group("Render");
  addInteger(*cmd, "--supersample", a->supersample,
             "Histogram cells per output pixel per axis (default: the genome's)", 1, 64)
      ->group("Render");
  addInteger(*cmd, "--seed", a->seed, "Seed of the random streams, 0 .. 2^64-1")
      ->capture_default_str()
      ->group("Render");
  cmd->add_option("--method", a->method,
                  "presorted (the paper's divergence-free chaos game) or naive (a random xform per point and "
                  "iteration: the reference)")
      ->check(CLI::IsMember({"presorted", "naive"}))
      ->capture_default_str()
      ->group("Render");
  cmd->add_flag("--earlyclip", a->earlyclip,
                "Gamma and clipping before the spatial filter (flam3's earlyclip)")
      ->group("Render");
  addMemoryBudgetOption(*cmd, a->memory_budget)->group("Render");
  a->execution.add(*cmd);
  a->outputs.addOutputs(*cmd, "Output PNG (numbered per flame when the file has several; - for stdout)")
      ->required();
  a->outputs.addStatsJson(*cmd, "Write statistics as JSON to PATH, or - for stdout");
  addInteger(*cmd, "--bpc", a->bpc, "Bits per PNG channel: 8 or 16", 8, 16)
      ->capture_default_str()
      ->group("Output");
  addInteger(*cmd, "--png-level", a->png_level,
             "zlib compression level of the PNGs: 0 (none) .. 9 (smallest, slowest); flames are noisy, so levels "
             "above 4 save little",
             0, 9)
      ->capture_default_str()
      ->group("Output");
  cmd->add_flag("--transparency", a->transparency, "RGBA with the background transparent (else RGB over it)")
      ->group("Output");
  cmd->add_flag("-q,--quiet", a->quiet, "No summary or progress bar on stderr")->group("Output");
  cmd->callback([a] { runFlame(*a); });
}

// --- procgen flam3-render ---------------------------------------------------

/// flam3-render's answer to any command-line argument: its documentation, on
/// standard output, exit 0 — here the variables this implementation reads.
constexpr const char* kFlam3RenderHelp =
    "procgen flam3-render - flam3-render's interface on procgen's flame renderer\n"
    "\n"
    "Reads flam3 genomes from standard input (or in=FILE) and renders every <flame> to PNG, configured\n"
    "by environment variables as flam3-render (flam3 3.1.1); any command-line argument prints this text.\n"
    "\n"
    "    env qs=2 ss=0.5 prefix=out. procgen flam3-render < test.flam3\n"
    "\n"
    "envar           default     meaning\n"
    "=====           =======     =======\n"
    "prefix          (empty)     prefix names of output files with this string (prefix00000.png ...)\n"
    "in              stdin       name of input file\n"
    "out             NA          name of output file (with several flames only the last is rendered:\n"
    "                            flam3-render would overwrite the others)\n"
    "qs              1           quality scale, multiply quality of all frames by this\n"
    "ss              1           size scale, multiply size (in pixels) and scale of all frames by this\n"
    "format          png         png only (jpg and ppm are refused)\n"
    "nthreads        0           number of threads to use for render; 0 = all cores\n"
    "bpc             8           bits per color channel: 8 or 16\n"
    "transparency    0           make the background transparent (RGBA)\n"
    "earlyclip       0           gamma and clipping before the spatial filter\n"
    "isaac_seed      1           seed of the iteration: a decimal integer is used as it is, other text\n"
    "                            is hashed (FNV-1a); flam3 defaults to the time, procgen to a fixed seed\n"
    "seed            1           used when isaac_seed is not set (an integer)\n"
    "verbose         1           if non-zero print progress on stderr\n"
    "name_enable     0           use the 'name' attribute of <flame> to name the image (NAME.png)\n"
    "flam3_palettes  (default)   location of flam3-palettes.xml (default\n"
    "                            /usr/share/flam3/flam3-palettes.xml)\n"
    "use_mem         auto        bytes of memory to use; a histogram beyond it is refused (exit 2)\n"
    "                            instead of being rendered in strips\n"
    "pixel_aspect    1.0         only 1 is supported\n"
    "Unknown variation attributes are warned about and ignored, as flam3 does (procgen flame: an error).\n"
    "bits, nstrips, sub_batch_size, jpeg, enable_png_comments, enable_jpeg_comments: accepted, ignored.\n"
    "\n"
    "Exit codes: 0 ok, 1 bad variables, 2 bad genome (file:line:col: error: ...) or a flame beyond the\n"
    "memory budget, 4 output error; no image is written when any flame fails.\n"
    "The renderer: procgen flame --help.\n";

std::optional<std::string> envValue(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

/// An integer variable (decimal, optional sign), or `fallback` when unset.
int64_t envInteger(const char* name, int64_t fallback) {
  const std::optional<std::string> v = envValue(name);
  if (!v) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || errno == ERANGE)
    usage(std::string(name) + "='" + printableText(*v, 40) + "' is not an integer");
  return value;
}

/// A number variable, or `fallback` when unset.
double envNumber(const char* name, double fallback) {
  const std::optional<std::string> v = envValue(name);
  if (!v) return fallback;
  char* end = nullptr;
  const double value = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0' || !std::isfinite(value))
    usage(std::string(name) + "='" + printableText(*v, 40) + "' is not a finite number");
  return value;
}

/// isaac_seed (flam3: a string seeding ISAAC) → procgen's seed: a decimal
/// integer as itself, other text by its FNV-1a hash; else seed; else 1.
uint64_t flam3Seed() {
  if (const std::optional<std::string> isaac = envValue("isaac_seed"); isaac && !isaac->empty()) {
    if (isaac->size() <= 19 && isaac->find_first_not_of("0123456789") == std::string::npos)
      return std::stoull(*isaac);
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : *isaac) h = (h ^ c) * 0x100000001b3ull;
    return h;
  }
  const int64_t seed = envInteger("seed", 1);
  return static_cast<uint64_t>(seed);
}

void runFlam3Render(const std::vector<std::string>& arguments) {
  if (!arguments.empty()) {  // flam3-render: "Any command line option will cause the program to write its
                             // documentation"
    std::fputs(kFlam3RenderHelp, stdout);
    if (std::fflush(stdout) != 0) throw OutputError("cannot write to standard output");
    return;
  }
  const Clock::time_point start = Clock::now();
  const std::string format = envValue("format").value_or("png");
  if (format == "jpg" || format == "ppm")
    usage("format=" + format + ": procgen flam3-render writes png only (unset format, or format=png)");
  if (format != "png")
    usage("format must be either jpg, ppm, or png, not " + printableText(format, 40) + ".");
  const int64_t bpc = envInteger("bpc", 8);
  if (bpc != 8 && bpc != 16) usage("Unexpected bpc specified (" + std::to_string(bpc) + "): 8 or 16");
  if (envNumber("pixel_aspect", 1.0) != 1.0) usage("pixel_aspect: only 1 is supported");
  for (const char* unsupported : {"image", "apo_palette", "insert_palette"})
    if (const std::optional<std::string> v = envValue(unsupported); v && !v->empty() && *v != "0")
      usage(std::string(unsupported) + " is not supported by procgen flam3-render");
  const double qs = envNumber("qs", 1.0), ss = envNumber("ss", 1.0);
  if (!(qs > 0)) usage("qs must be positive");
  if (!(ss > 0)) usage("ss must be positive");
  const int64_t threads = envInteger("nthreads", 0);
  if (threads < 0 || threads > 4096) usage("nthreads must be 0 (all cores) .. 4096");
  const int64_t verbose = envInteger("verbose", 1);
  const bool name_enable = envInteger("name_enable", 0) != 0;
  const std::string prefix = envValue("prefix").value_or("");
  const std::optional<std::string> out = envValue("out");
  uint64_t budget = 0;
  if (envValue("use_mem")) {
    const double bytes = envNumber("use_mem", 0);
    if (!(bytes >= 1)) usage("use_mem must be at least 1 byte");
    budget = bytes >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(bytes);
  }

  FlameRun run;
  run.start = start;
  run.options.quality_scale = qs;
  run.options.size_scale = ss;
  run.options.seed = flam3Seed();
  run.options.transparency = envInteger("transparency", 0) != 0;
  run.options.earlyclip = envInteger("earlyclip", 0) != 0;
  run.options.bits_per_channel = static_cast<int>(bpc);
  run.options.memory_budget = budget;
  run.execution = backendAvailable(Backend::kCpu) ? Execution{Backend::kCpu, static_cast<int>(threads)}
                                                  : Execution{Backend::kSerial, 1};
  prepareBackend(run.execution);
  run.progress = verbose != 0 && stderrIsTerminal();

  FlameReadOptions read;
  read.skip_unknown = true;  // flam3: "Warning: unrecognized variation X.  Ignoring."
  if (const std::optional<std::string> palettes = envValue("flam3_palettes"); palettes && !palettes->empty())
    read.palettes_file = *palettes;
  read.warn = [](const std::string& message) { std::fprintf(stderr, "%s\n", message.c_str()); };
  readGenomes(run, envValue("in").value_or("-"), read);

  const int count = static_cast<int>(run.genomes.size());
  for (int i = 0; i < count; ++i) {
    const FlameGenome& g = run.genomes[size_t(i)];
    std::string path;
    if (out) {
      path = *out;
    } else if (name_enable && !g.name.empty()) {
      if (g.name.find('/') != std::string::npos || g.name == "." || g.name == "..")
        throw flameGenomeError(run.file, run.text, g, i, "name '" + g.name + "' cannot be used as a file name");
      path = g.name + ".png";
    } else {
      char number[16];
      std::snprintf(number, sizeof number, "%05d", i);
      path = prefix + number + ".png";
    }
    run.targets.push_back({&g, i, path});
  }
  // flam3-render writes flames that share a name one after the other into the
  // same file, so only the last survives; render only that one.
  std::vector<FlameTarget> kept;
  for (size_t k = 0; k < run.targets.size(); ++k) {
    bool overwritten = false;
    for (size_t later = k + 1; later < run.targets.size(); ++later)
      overwritten = overwritten || run.targets[later].path == run.targets[k].path;
    if (!overwritten) kept.push_back(run.targets[k]);
  }
  if (kept.size() < run.targets.size())
    std::fprintf(
        stderr,
        "warning: writing multiple images to one file; all but the last would be lost, so %zu of %zu "
        "flames are rendered\n",
        kept.size(), run.targets.size());
  run.targets = std::move(kept);

  if (verbose) {
    run.before = [&run](const FlameTarget&, size_t k) {
      if (run.targets.size() > 1) std::fprintf(stderr, "flame = %zu/%zu\n", k + 1, run.targets.size());
    };
    run.after = [](const FlameTarget& t, size_t) {
      std::fprintf(stderr, "writing %s...done.\n", t.path.c_str());
    };
  }
  const FlameTotals totals = renderFlames(run);
  if (verbose && totals.flames > 1 && distributed::isRoot())
    std::fprintf(stderr, "total time = %.1f seconds\n", totals.total_ms / 1e3);
}

void setupFlam3Render(CLI::App& app) {
  auto arguments = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand(
      "flam3-render",
      "flam3-render's interface: genomes on stdin, settings in environment variables (qs, ss, "
      "out, prefix, ...); any argument prints them");
  cmd->set_help_flag();  // as flam3-render: every argument, --help included, prints the documentation
  cmd->allow_extras();
  cmd->positionals_at_end(false);
  cmd->callback([arguments, cmd] {
    *arguments = cmd->remaining();
    runFlam3Render(*arguments);
  });
}

}  // namespace

PROCGEN_REGISTER_COMMAND(29, setupFlame);
PROCGEN_REGISTER_COMMAND(29, setupFlam3Render);

}  // namespace procgen::cli

// procgen bench lsystem: the paper's Table 2 (Lipp et al. §7) on this machine.
// For each model, derivation and interpretation are timed separately on the
// serial backend and on every other requested backend × thread count; each
// figure is the median of --repeat runs, measured side by side in one process
// with the columns taking turns in every round, and every speedup is the median
// of the per-round ratios (bench_stats.hpp), so the ratios are meaningful on a
// shared machine whose speed drifts. Interpretation always reads the same (serially
// derived) string. The opencl column is one column (the device sets its own
// parallelism), labelled with the device name — on PoCL a CPU figure; it is
// part of the default backends when a device exists.
//
// Beside those steady-state figures (memory reused, pools warm) every stage
// gets two one-shot figures (issue 15): "cold", the median of the times the
// CLI itself reports in fresh processes (`procgen lsystem ... --stats-json -`
// run as a child --cold-runs times), and "floor", the median time a fresh
// process (`procgen bench floor`) takes to fault in, with the same allocator
// (huge pages) and thread count, the bytes that stage must write — no
// one-shot run can be faster than that.
//
// `procgen bench parens` does the same for parentheses matching (Levien §4),
// and `procgen bench noise` gives the noise seed's table
// (shared/seeds/001_191daa7b81372e37.txt §6): ms per 128³ volume of 3D Perlin
// fBm for octaves 1–8, naive beside optimized on every backend. `procgen
// bench flame` gives issue 19's flame figures: samples/s per genome class
// (steady and cold) and the end-to-end wall time of `procgen flam3-render`
// beside Debian's flam3-render on the same genomes, quality and threads.
#include <malloc.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_stats.hpp"
#include "cli.hpp"
#include "output_options.hpp"
#include "procgen/flame.hpp"
#include "procgen/flame_render.hpp"
#include "procgen/lsystem.hpp"
#include "procgen/memory.hpp"
#include "procgen/noise.hpp"
#include "procgen/octree.hpp"
#include "procgen/opencl.hpp"
#include "procgen/scene.hpp"
#include "procgen/treebox.hpp"

namespace procgen::cli {
namespace {

namespace fs = std::filesystem;

// The seven models of the paper's Table 1, at the iteration counts their files carry.
constexpr const char* kTable1Models[] = {"hilbert3d", "koch-curve",       "row-of-trees", "plant-2d",
                                         "tree-3d",   "plant-stochastic", "plant-context"};

struct BenchOptions {
  std::vector<std::string> files;
  std::string examples_dir;
  std::vector<std::string> backends;  // empty: cpu, and opencl when a device exists
  std::vector<int> threads;  // empty: 1, 2, 4 ... up to the machine's threads
  int repeat = 5;
  CommandOutputs outputs;  // --json
  bool fresh_memory = false;  // let every run take first-touch page faults
  int cold_runs = 5;  // fresh processes per cold and floor cell (0: no cold columns)
  uint64_t elements = uint64_t{1} << 26;  // bench parens: n
};

/// One column of the table: a backend at a thread count (opencl: on a device).
struct Column {
  std::string label;
  Execution execution;
  std::string device;  ///< opencl: the device name
};

/// One stage of one model: every column's runs, round by round.
struct StageTimes {
  std::vector<std::vector<double>> runs;  ///< per column: ms of round 0, 1, ... (empty when it failed)
  /// Median ms of column k; -1 when it failed.
  double medianMs(size_t k) const { return runs[k].empty() ? -1.0 : median(runs[k]); }
  /// Column k (> 0) against serial (column 0), round by round; invalid when either failed.
  Speedup speedup(size_t k) const { return pairedSpeedup(runs[0], runs[k]); }
};

/// Per column: the runs of a one-shot figure, each in a fresh process.
struct OneShot {
  std::vector<std::vector<double>> runs;
  double medianMs(size_t k) const { return k < runs.size() && !runs[k].empty() ? median(runs[k]) : -1.0; }
};

struct Row {
  std::string model;
  int iterations = 0;
  uint64_t modules = 0;
  uint64_t modules_total = 0;
  StageTimes derive;
  StageTimes interpret;
  OneShot derive_cold, interpret_cold;    ///< per column: CLI-reported ms in fresh processes
  OneShot derive_floor, interpret_floor;  ///< per column: ms to fault in the stage's output
  uint64_t derive_bytes = 0;     ///< bytes of the derived string (what derivation must write)
  uint64_t interpret_bytes = 0;  ///< bytes of the geometry (what interpretation must write)
  std::string failure;  // first failure message, if any
};

/// Puts every core's private caches in the same state before a run: one
/// plain thread per hardware thread writes its own 4 MiB (more than a core's
/// L2), so nothing the previous run left modified in another core's cache is
/// still there. Without it a run was slowed by its predecessor — after a
/// two-thread run half of the reused buffers sit in the other core's L2 —
/// and the column order decided the figures: serial tree-3d derivation took
/// 4.04 ms (median) beside cpu x1 and cpu x2, where it ran right after cpu x2
/// in two rounds of three, and 3.21 ms beside cpu x1 alone; 3.2 ms in both
/// settings with this. std::threads, not the oneTBB pool, whose workers are
/// left idle as a one-off call finds them.
void settleCaches() {
  constexpr size_t kBytes = size_t{4} << 20;
  static std::vector<std::vector<unsigned char>> buffers;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  if (buffers.size() != threads) buffers.assign(threads, std::vector<unsigned char>(kBytes));
  auto write = [](std::vector<unsigned char>& b, unsigned char v) { std::fill(b.begin(), b.end(), v); };
  static unsigned char value = 0;
  ++value;
  std::vector<std::thread> helpers;
  for (unsigned t = 1; t < threads; ++t) helpers.emplace_back(write, std::ref(buffers[t]), value);
  write(buffers[0], value);
  for (std::thread& h : helpers) h.join();
}

/// Wall times of `repeat` runs of run(column) for every column, after
/// one untimed warm-up run per column (page faults, caches and lazily created
/// thread pools are not part of the figures). The columns take turns within
/// every round, so load from elsewhere on a shared machine falls on all of
/// them alike and the ratios stay meaningful. A column whose run throws an
/// Error gets -1 and the first message goes to `failure`.
template <typename Run>
StageTimes timeColumns(const std::vector<Column>& columns, int repeat, bool fresh_memory, std::string& failure,
                       Run&& run) {
  const size_t n = columns.size();
  std::vector<bool> failed(n, false);
  std::vector<std::vector<double>> ms(n);
  auto attempt = [&](size_t c, bool timed) {
    if (failed[c]) return;
    try {
      if (fresh_memory) releaseLargeBlocks();  // the next run maps (and faults in) fresh blocks
      settleCaches();
      const auto t0 = std::chrono::steady_clock::now();
      run(columns[c]);
      if (timed)
        ms[c].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    } catch (const Error& e) {  // e.g. a stage the backend does not have yet
      failed[c] = true;
      if (failure.empty()) failure = columns[c].label + ": " + e.what();
    }
  };
  for (size_t c = 0; c < n; ++c) attempt(c, false);
  // Round r starts at column r mod n, so no column is always first or last
  // in a round (settleCaches() removes what one run leaves to the next).
  for (int r = 0; r < repeat; ++r)
    for (size_t k = 0; k < n; ++k) attempt((static_cast<size_t>(r) + k) % n, true);
  StageTimes out;
  out.runs.resize(n);
  for (size_t c = 0; c < n; ++c)
    if (!failed[c]) out.runs[c] = std::move(ms[c]);
  return out;
}

fs::path findExamplesDir(const std::string& given) {
  if (!given.empty()) return given;
  for (fs::path p : {fs::path("examples/lsystems"), fs::path(PROCGEN_SOURCE_DIR) / "examples" / "lsystems"})
    if (fs::is_directory(p)) return p;
  throw Error("cannot find examples/lsystems: run from the source tree or pass --examples DIR",
              ExitCode::kUsage);
}

std::vector<Column> makeColumns(const BenchOptions& o) {
  std::vector<int> threads = o.threads;
  if (threads.empty()) {
    const int hw = effectiveThreads(Execution{Backend::kCpu, 0});
    for (int t = 1; t < hw; t *= 2) threads.push_back(t);
    threads.push_back(hw);
  }
  std::vector<Column> columns{{"serial", Execution{Backend::kSerial, 1}, {}}};
  const bool defaults = o.backends.empty();
  std::vector<std::string> backends = o.backends;
  if (defaults) {
    backends = {"cpu"};
    if (backendAvailable(Backend::kOpenCL)) backends.push_back("opencl");
  }
  for (const std::string& name : backends) {
    const std::optional<Backend> b = parseBackend(name);
    if (!b) throw Error("unknown backend '" + name + "' (serial, cpu, opencl)", ExitCode::kUsage);
    if (*b == Backend::kSerial) continue;
    if (!backendAvailable(*b)) {
      std::fprintf(stderr, "warning: backend '%s' is not built in; skipped\n", name.c_str());
      continue;
    }
    if (*b == Backend::kOpenCL) {
      if (openclDevices().empty()) {
        std::fprintf(stderr, "warning: backend 'opencl' skipped: %s\n", openclStatus().c_str());
        continue;
      }
      const OpenCLDevice device = openclSelectedDevice();
      columns.push_back({"opencl " + device.name, Execution{Backend::kOpenCL, 1}, device.name});
      continue;
    }
    for (int t : threads) columns.push_back({name + " x" + std::to_string(t), Execution{*b, t}, {}});
  }
  return columns;
}

/// Bytes a derivation must write: its final string.
uint64_t stringBytes(const ModuleString& s) {
  return s.symbols.size() + sizeof(uint64_t) * s.param_offsets.size() + sizeof(float) * s.params.size();
}

/// Bytes an interpretation must write: its geometry.
uint64_t geometryBytes(const Geometry& g) {
  return sizeof(Segment) * g.segments.size() + sizeof(Vec3) * g.polygon_vertices.size() +
         sizeof(uint64_t) * g.polygon_offsets.size() + sizeof(int32_t) * g.polygon_colors.size() +
         sizeof(int32_t) * g.polygon_instances.size();
}

// -- one-shot figures: fresh processes ----------------------------------------

std::string shellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Runs this executable with `args` in a fresh process; its stdout, or
/// nothing when it could not run or failed.
std::optional<std::string> runSelf(const std::string& args) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  FILE* pipe = popen((shellQuote(self.string()) + " " + args + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  char buf[4096];
  for (size_t got; (got = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, got);
  if (pclose(pipe) != 0) return std::nullopt;
  return out;
}

/// The number after "key": in a JSON text (either spacing), -1 when absent.
double jsonField(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\"");
  if (at == std::string::npos) return -1.0;
  const size_t colon = json.find(':', at);
  if (colon == std::string::npos) return -1.0;
  char* end = nullptr;
  const double v = std::strtod(json.c_str() + colon + 1, &end);
  return end == json.c_str() + colon + 1 ? -1.0 : v;
}

/// --backend/--threads (and the device) of a column, as the CLI takes them.
std::string executionArgs(const Column& c) {
  std::string a = " --backend " + std::string(backendName(c.execution.backend));
  if (c.execution.backend == Backend::kCpu) a += " --threads " + std::to_string(effectiveThreads(c.execution));
  return a;
}

/// Threads that write a stage's output on a column: the cpu backend's count;
/// one for serial, and for opencl, whose results the host copies out.
int writerThreads(const Column& c) {
  return c.execution.backend == Backend::kCpu ? effectiveThreads(c.execution) : 1;
}

/// The cold floor in a fresh process: ms to allocate `bytes` with the large
/// allocator and fault them in with `threads` threads (`procgen bench floor`).
double floorMs(uint64_t bytes, int threads) {
  if (bytes == 0) return 0.0;
  const std::optional<std::string> out =
      runSelf("bench floor --bytes " + std::to_string(bytes) + " --threads " + std::to_string(threads));
  return out ? jsonField(*out, "ms") : -1.0;
}

/// `runs` rounds over the columns (taking turns, as timeColumns does) of
/// sample(column, round), a one-shot measurement that fills one value per
/// stage; a failed measurement (< 0) is left out.
template <typename Sample>
void oneShotRounds(const std::vector<Column>& columns, int runs, std::vector<OneShot*> stages, Sample&& sample) {
  for (OneShot* st : stages) st->runs.assign(columns.size(), {});
  std::vector<double> got(stages.size());
  for (int r = 0; r < runs; ++r)
    for (size_t k = 0; k < columns.size(); ++k) {
      const size_t c = (static_cast<size_t>(r) + k) % columns.size();
      sample(columns[c], got);
      for (size_t s = 0; s < stages.size(); ++s)
        if (got[s] >= 0) stages[s]->runs[c].push_back(got[s]);
    }
}

/// Cold and floor columns of an L-system or scene row.
void measureOneShot(const fs::path& file, const std::vector<Column>& columns, const BenchOptions& o, Row& row) {
  if (o.cold_runs <= 0) return;
  const std::string command = file.extension() == ".scene" ? "scene " : "lsystem ";
  oneShotRounds(columns, o.cold_runs, {&row.derive_cold, &row.interpret_cold},
                [&](const Column& c, std::vector<double>& got) {
                  const std::optional<std::string> out =
                      runSelf(command + shellQuote(file.string()) + " -q --stats-json -" + executionArgs(c));
                  got[0] = out ? jsonField(*out, "derive_ms") : -1.0;
                  got[1] = out ? jsonField(*out, "interpret_ms") : -1.0;
                });
  oneShotRounds(columns, o.cold_runs, {&row.derive_floor, &row.interpret_floor},
                [&](const Column& c, std::vector<double>& got) {
                  got[0] = floorMs(row.derive_bytes, writerThreads(c));
                  got[1] = floorMs(row.interpret_bytes, writerThreads(c));
                });
}

/// Issue 15's target for a one-shot figure: within 1.5× of steady state or
/// within 1.25× of the cold floor, whichever is larger.
bool meetsColdTarget(double cold, double steady, double floor) {
  return cold >= 0 && steady >= 0 && cold <= std::max(1.5 * steady, floor >= 0 ? 1.25 * floor : 0.0);
}

/// A scene file (paper §6): all instances derived in batched passes, then drawn.
Row benchScene(const fs::path& file, const std::vector<Column>& columns, const BenchOptions& o) {
  const LSystemScene scene = LSystemScene::fromFile(file);
  Row row;
  row.model = file.filename().string();
  const LSystemSceneDerivation derived = deriveScene(scene, DeriveOptions{});
  for (const DeriveStats& st : derived.stats) {
    row.iterations = std::max(row.iterations, st.iterations);
    row.modules_total += st.modules_total;
  }
  row.modules = derived.string.size();
  row.derive_bytes = stringBytes(derived.string);
  row.interpret_bytes = geometryBytes(interpretScene(scene, derived, Execution{}));
  row.derive = timeColumns(columns, o.repeat, o.fresh_memory, row.failure, [&](const Column& c) {
    DeriveOptions dopt;
    dopt.execution = c.execution;
    (void)deriveScene(scene, dopt);
  });
  row.interpret = timeColumns(columns, o.repeat, o.fresh_memory, row.failure,
                              [&](const Column& c) { (void)interpretScene(scene, derived, c.execution); });
  measureOneShot(file, columns, o, row);
  return row;
}

Row benchModel(const fs::path& file, const std::vector<Column>& columns, const BenchOptions& o) {
  if (file.extension() == ".scene") return benchScene(file, columns, o);
  const LSystem lsystem = LSystem::fromFile(file);
  Row row;
  row.model = lsystem.name();
  DeriveStats stats;
  const ModuleString string = derive(lsystem, DeriveOptions{}, &stats);
  row.iterations = stats.iterations;
  row.modules = stats.modules;
  row.modules_total = stats.modules_total;
  row.derive_bytes = stringBytes(string);
  {
    InterpretOptions iopt;
    iopt.view = lsystem.view();
    row.interpret_bytes = geometryBytes(interpret(lsystem, string, iopt));
  }
  row.derive = timeColumns(columns, o.repeat, o.fresh_memory, row.failure, [&](const Column& c) {
    DeriveOptions dopt;
    dopt.execution = c.execution;
    (void)derive(lsystem, dopt);
  });
  row.interpret = timeColumns(columns, o.repeat, o.fresh_memory, row.failure, [&](const Column& c) {
    InterpretOptions iopt;
    iopt.view = lsystem.view();
    iopt.execution = c.execution;
    (void)interpret(lsystem, string, iopt);
  });
  measureOneShot(file, columns, o, row);
  return row;
}

/// Milliseconds: three decimals below 0.1 ms (a D0L derivation takes
/// 0.01-0.1 ms; two decimals left it one or two digits), two below 10 ms.
std::string cell(double ms) {
  char buf[32];
  if (ms < 0) return "-";
  std::snprintf(buf, sizeof(buf), ms < 0.1 ? "%.3f" : ms < 10 ? "%.2f" : "%.1f", ms);
  return buf;
}

/// Markdown table: one line per model and stage. "best speedup" is the largest
/// paired speedup of a non-serial column over serial (median of the per-round
/// ratios, interquartile range in parentheses); "modules/µs best" is that
/// column's throughput at its median time.
std::string formatTable(const std::vector<Row>& rows, const std::vector<Column>& columns) {
  std::ostringstream t;
  t << "| model | n | modules | stage |";
  for (const Column& c : columns) t << ' ' << c.label << " ms |";
  t << " best speedup (IQR) | modules/µs serial | modules/µs best |\n|---|---:|---:|---|";
  for (size_t k = 0; k < columns.size(); ++k) t << "---:|";
  t << "---:|---:|---:|\n";
  for (const Row& r : rows) {
    for (int stage = 0; stage < 2; ++stage) {
      const StageTimes& st = stage == 0 ? r.derive : r.interpret;
      std::vector<double> ms(st.runs.size());
      for (size_t k = 0; k < ms.size(); ++k) ms[k] = st.medianMs(k);
      // Paper Table 2: derivation throughput counts every step's output, interpretation the final string.
      const double work = static_cast<double>(stage == 0 ? r.modules_total : r.modules);
      Speedup speedup;  // of the best non-serial column
      double best = -1;  // its median ms
      for (size_t k = 1; k < ms.size(); ++k) {
        const Speedup s = st.speedup(k);
        if (s.valid() && (!speedup.valid() || s.median > speedup.median)) {
          speedup = s;
          best = ms[k];
        }
      }
      t << "| " << r.model << " | " << r.iterations << " | " << r.modules << " | "
        << (stage == 0 ? "derive" : "interpret") << " |";
      for (double v : ms) t << ' ' << cell(v) << " |";
      char buf[64];
      auto fixed = [&buf](const char* fmt, double v) {
        std::snprintf(buf, sizeof(buf), fmt, v);
        return std::string(buf);
      };
      t << ' ' << (speedup.valid() ? fixed("%.2f×", speedup.median) + fixed(" (%.2f", speedup.q1) + fixed("–%.2f)", speedup.q3) : "-") << " | "
        << (ms[0] > 0 ? fixed("%.1f", work / (ms[0] * 1e3)) : "-") << " | "
        << (best > 0 ? fixed("%.1f", work / (best * 1e3)) : "-") << " |\n";
    }
  }
  return t.str();
}

/// One stage on one column in the cold table.
struct ColdCell {
  double cold = -1, steady = -1, floor = -1;
  Speedup cold_speedup;  ///< against serial, paired by round
};

const char* kColdHeader =
    "| model | stage | column | cold ms | steady ms | floor ms | cold / steady | cold / floor | target | cold "
    "speedup |\n|---|---|---|---:|---:|---:|---:|---:|---|---:|\n";

/// A line of the cold table. target: cold within max(1.5 × steady, 1.25 × floor).
std::string coldLine(const std::string& model, const std::string& stage, const std::string& column,
                     const ColdCell& c) {
  char buf[96];
  auto ratio = [&buf](double a, double b) {
    if (a < 0 || b <= 0) return std::string("-");
    std::snprintf(buf, sizeof(buf), "%.2f", a / b);
    return std::string(buf);
  };
  std::string speedup = "-";
  if (c.cold_speedup.valid()) {
    std::snprintf(buf, sizeof(buf), "%.2f×", c.cold_speedup.median);
    speedup = buf;
  }
  return "| " + model + " | " + stage + " | " + column + " | " + cell(c.cold) + " | " + cell(c.steady) + " | " +
         cell(c.floor) + " | " + ratio(c.cold, c.steady) + " | " + ratio(c.cold, c.floor) + " | " +
         (c.cold < 0 ? "-" : meetsColdTarget(c.cold, c.steady, c.floor) ? "yes" : "**no**") + " | " + speedup +
         " |\n";
}

ColdCell coldCell(const StageTimes& steady, const OneShot& cold, const OneShot& floor, size_t k) {
  ColdCell c;
  c.cold = cold.medianMs(k);
  c.steady = steady.medianMs(k);
  c.floor = floor.medianMs(k);
  if (k > 0 && k < cold.runs.size()) c.cold_speedup = pairedSpeedup(cold.runs[0], cold.runs[k]);
  return c;
}

/// Markdown table of the one-shot figures: a line per model, stage and column.
std::string formatColdTable(const std::vector<Row>& rows, const std::vector<Column>& columns) {
  std::string t = kColdHeader;
  for (const Row& r : rows)
    for (int stage = 0; stage < 2; ++stage)
      for (size_t k = 0; k < columns.size(); ++k)
        t += coldLine(r.model, stage == 0 ? "derive" : "interpret", columns[k].label,
                      stage == 0 ? coldCell(r.derive, r.derive_cold, r.derive_floor, k)
                                 : coldCell(r.interpret, r.interpret_cold, r.interpret_floor, k));
  return t;
}

/// `"<name>_cold_ms": [...], "<name>_floor_ms": [...], "<name>_floor_bytes": n,
/// "<name>_cold_target": [...]`: per column medians (-1: not measured) and
/// whether the cold figure meets the target (null: not measured).
void jsonOneShot(Json& j, const std::string& name, const StageTimes& steady, const OneShot& cold,
                 const OneShot& floor, uint64_t bytes, size_t columns) {
  Json& cold_ms = j[name + "_cold_ms"] = Json::array();
  for (size_t k = 0; k < columns; ++k) cold_ms.push_back(cold.medianMs(k));
  Json& floor_ms = j[name + "_floor_ms"] = Json::array();
  for (size_t k = 0; k < columns; ++k) floor_ms.push_back(floor.medianMs(k));
  j[name + "_floor_bytes"] = bytes;
  Json& target = j[name + "_cold_target"] = Json::array();
  for (size_t k = 0; k < columns; ++k) {
    const ColdCell c = coldCell(steady, cold, floor, k);
    if (c.cold < 0) target.push_back(nullptr);
    else target.push_back(meetsColdTarget(c.cold, c.steady, c.floor));
  }
}

Json columnsJson(const std::vector<Column>& columns) {
  Json cols = Json::array();
  for (const Column& c : columns) {
    Json col;
    col["label"] = c.label;
    col["backend"] = std::string(backendName(c.execution.backend));
    col["threads"] = effectiveThreads(c.execution);
    if (!c.device.empty()) col["device"] = c.device;
    cols.push_back(std::move(col));
  }
  return cols;
}

/// Per column, against serial: {median, q1, q3} of the per-round ratios (null: serial or failed).
Json speedupsJson(const StageTimes& st) {
  Json out = Json::array();
  for (size_t k = 0; k < st.runs.size(); ++k) {
    const Speedup sp = k == 0 ? Speedup{} : st.speedup(k);
    if (sp.valid())
      out.push_back({{"median", sp.median}, {"q1", sp.q1}, {"q3", sp.q3}});
    else
      out.push_back(nullptr);
  }
  return out;
}

Json benchJson(const std::vector<Row>& rows, const std::vector<Column>& columns) {
  Json j;
  j["columns"] = columnsJson(columns);
  Json& out_rows = j["rows"] = Json::array();
  for (const Row& row : rows) {
    Json r;
    r["model"] = row.model;
    r["iterations"] = row.iterations;
    r["modules"] = row.modules;
    r["modules_total"] = row.modules_total;
    for (int stage = 0; stage < 2; ++stage) {
      const StageTimes& st = stage == 0 ? row.derive : row.interpret;
      const std::string name = stage == 0 ? "derive" : "interpret";
      Json& ms = r[name + "_ms"] = Json::array();
      for (size_t k = 0; k < st.runs.size(); ++k) ms.push_back(st.medianMs(k));
      r[name + "_speedup"] = speedupsJson(st);
      jsonOneShot(r, name, st, stage == 0 ? row.derive_cold : row.interpret_cold,
                  stage == 0 ? row.derive_floor : row.interpret_floor,
                  stage == 0 ? row.derive_bytes : row.interpret_bytes, columns.size());
    }
    out_rows.push_back(std::move(r));
  }
  return j;
}

void runBenchLsystem(const BenchOptions& o) {
  if (o.repeat < 1) throw Error("--repeat must be at least 1", ExitCode::kUsage);
  std::vector<fs::path> files(o.files.begin(), o.files.end());
  if (files.empty()) {
    const fs::path dir = findExamplesDir(o.examples_dir);
    for (const char* m : kTable1Models) files.push_back(dir / (std::string(m) + ".l"));
    files.push_back(dir.parent_path() / "scenes" / "forest.scene");  // many L-systems at once (§6)
  }
  if (!o.fresh_memory) {
    // Steady state, as in an application that generates again and again: big
    // blocks stay on the heap when freed, so the next run reuses pages that
    // are already mapped instead of faulting in fresh ones (on this kind of
    // VM a first touch costs as much as the work). --fresh-memory measures
    // one-shot runs instead.
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, -1);
  }
  const std::vector<Column> columns = makeColumns(o);
  std::vector<Row> rows;
  for (const fs::path& f : files) {
    if (stderrIsTerminal()) std::fprintf(stderr, "bench: %s ...\n", f.filename().string().c_str());
    rows.push_back(benchModel(f, columns, o));
    if (!rows.back().failure.empty())
      std::fprintf(stderr, "warning: %s: %s\n", rows.back().model.c_str(), rows.back().failure.c_str());
  }
  std::printf("Median of %d runs per cell (%s); speedups are medians of the per-round ratios "
              "against serial; hardware threads: %d.\n\n%s",
              o.repeat,
              o.fresh_memory ? "fresh memory: first-touch page faults included" : "memory reused between runs",
              effectiveThreads(Execution{Backend::kCpu, 0}), formatTable(rows, columns).c_str());
  if (o.cold_runs > 0)
    std::printf("\nOne-shot: cold = median of %d fresh `procgen %s --stats-json -` runs (the stage times the "
                "CLI reports); floor = median of %d fresh processes faulting in the stage's output bytes with "
                "the large allocator and the column's writer threads; target: cold <= max(1.5 × steady, "
                "1.25 × floor).\n\n%s",
                o.cold_runs, "lsystem|scene FILE", o.cold_runs, formatColdTable(rows, columns).c_str());
  o.outputs.writeStats(benchJson(rows, columns));
}

/// `procgen bench parens`: matching n random parentheses (the input of
/// `procgen parens --random n`), int32 output, on every column: steady state
/// in this process (output array reused), cold in fresh `procgen parens`
/// processes, floor = faulting in the 4n output bytes.
void runBenchParens(const BenchOptions& o) {
  if (o.repeat < 1) throw Error("--repeat must be at least 1", ExitCode::kUsage);
  const uint64_t n = o.elements;
  if (n == 0 || n > kMaxInt32Elements) throw Error("--elements must be in 1 .. 2^31-1", ExitCode::kUsage);
  const std::vector<Column> columns = makeColumns(o);
  OverwriteVector<uint8_t> input(n);
  randomParentheses(n, 1, 0.5, input.data());  // procgen parens --random n: seed 1, depth bias 0.5
  OverwriteVector<int32_t> out(n);
  std::string failure;
  const StageTimes steady = timeColumns(columns, o.repeat, o.fresh_memory, failure, [&](const Column& c) {
    (void)matchSymbols(input.data(), n, '(', ')', out.data(), c.execution);
  });
  if (!failure.empty()) std::fprintf(stderr, "warning: %s\n", failure.c_str());
  OneShot cold, floor;
  if (o.cold_runs > 0) {
    const std::string args = "parens --random " + std::to_string(n) + " --stats-json -";
    oneShotRounds(columns, o.cold_runs, {&cold}, [&](const Column& c, std::vector<double>& got) {
      const std::optional<std::string> json = runSelf(args + executionArgs(c));
      got[0] = json ? jsonField(*json, "ms") : -1.0;
    });
    oneShotRounds(columns, o.cold_runs, {&floor}, [&](const Column& c, std::vector<double>& got) {
      got[0] = floorMs(n * sizeof(int32_t), writerThreads(c));
    });
  }
  auto rate = [n](double ms) {
    char buf[32];
    if (ms <= 0) return std::string("-");
    std::snprintf(buf, sizeof(buf), "%.2f", static_cast<double>(n) / (ms * 1e6));
    return std::string(buf);
  };
  std::printf("Parentheses matching, n = %llu (random, depth bias 0.5, int32 output); steady: median of %d runs "
              "(%s); G elements/s = n / median.\n\n| column | steady ms | steady G/s | steady speedup | cold ms | "
              "cold G/s | floor ms |\n|---|---:|---:|---:|---:|---:|---:|\n",
              static_cast<unsigned long long>(n), o.repeat,
              o.fresh_memory ? "fresh memory: first-touch page faults included" : "memory reused between runs");
  for (size_t k = 0; k < columns.size(); ++k) {
    const Speedup sp = k == 0 ? Speedup{} : steady.speedup(k);
    char buf[32] = "-";
    if (sp.valid()) std::snprintf(buf, sizeof(buf), "%.2f×", sp.median);
    std::printf("| %s | %s | %s | %s | %s | %s | %s |\n", columns[k].label.c_str(), cell(steady.medianMs(k)).c_str(),
                rate(steady.medianMs(k)).c_str(), buf, cell(cold.medianMs(k)).c_str(), rate(cold.medianMs(k)).c_str(),
                cell(floor.medianMs(k)).c_str());
  }
  if (o.cold_runs > 0) {
    std::string t = kColdHeader;
    for (size_t k = 0; k < columns.size(); ++k)
      t += coldLine("parens", "match", columns[k].label, coldCell(steady, cold, floor, k));
    std::printf("\nOne-shot: cold = median of %d fresh `procgen %s --stats-json -` runs; floor = median of %d "
                "fresh processes faulting in the %llu output bytes.\n\n%s",
                o.cold_runs, ("parens --random " + std::to_string(n)).c_str(), o.cold_runs,
                static_cast<unsigned long long>(n * sizeof(int32_t)), t.c_str());
  }
  Json j;
  j["elements"] = n;
  j["columns"] = columnsJson(columns);
  Json& match_ms = j["match_ms"] = Json::array();
  for (size_t k = 0; k < columns.size(); ++k) match_ms.push_back(steady.medianMs(k));
  jsonOneShot(j, "match", steady, cold, floor, n * sizeof(int32_t), columns.size());
  o.outputs.writeStats(j);
}

/// `procgen bench noise`: the seed's table (§6, ms per 128³ volume for
/// octaves 1–8) of 3D Perlin fBm at frequency 0.0173, lacunarity 2, gain 0.5
/// (non-dyadic: at 1/2^k the high octaves would sample lattice points, where
/// gradient noise is 0). Columns: naive (the seed's unoptimized baseline, one
/// core), serial, cpu at each thread count, opencl when a device exists.
/// Steady: median of --repeat runs into one reused buffer, columns taking
/// turns; cold: median of the gen_ms that fresh `procgen noise` processes report.
void runBenchNoise(const BenchOptions& o, const std::vector<int>& octave_list, uint64_t edge) {
  if (o.repeat < 1) throw Error("--repeat must be at least 1", ExitCode::kUsage);
  if (edge < 8 || edge > 1024) throw Error("--size must be in 8..1024", ExitCode::kUsage);
  for (int k : octave_list)
    if (k < 1 || k > kMaxOctaves) throw Error("--octaves must be in 1..16", ExitCode::kUsage);
  std::vector<Column> columns{{"naive", Execution{Backend::kSerial, 1}, {}}};
  for (Column& c : makeColumns(o)) columns.push_back(std::move(c));
  auto naive = [](const Column& c) { return c.label == "naive"; };
  NoiseGrid grid;
  grid.size = {edge, edge, edge, 1};
  const uint64_t points = grid.points();
  OverwriteVector<float> out(points);
  struct NoiseRow {
    int octaves;
    StageTimes steady;
    OneShot cold;
  };
  std::vector<NoiseRow> rows;
  std::string failure;
  for (int k : octave_list) {
    NoiseParams params;  // perlin, 3D fBm, frequency 0.0173, lacunarity 2, gain 0.5
    params.octaves = k;
    if (stderrIsTerminal()) std::fprintf(stderr, "bench noise: %d octave%s ...\n", k, k == 1 ? "" : "s");
    NoiseRow row{k, timeColumns(columns, o.repeat, o.fresh_memory, failure, [&](const Column& c) {
                   (void)generateNoise(params, grid, std::span<float>(out.data(), points), c.execution,
                                       naive(c) ? NoiseEvaluation::kNaive : NoiseEvaluation::kOptimized);
                 }), {}};
    if (o.cold_runs > 0) {
      const std::string args = "noise perlin --size " + std::to_string(edge) + " --octaves " + std::to_string(k) +
                               " --frequency 0.0173 --lacunarity 2 --gain 0.5 -q --stats-json -";
      oneShotRounds(columns, o.cold_runs, {&row.cold}, [&](const Column& c, std::vector<double>& got) {
        const std::optional<std::string> json = runSelf(args + executionArgs(c) + (naive(c) ? " --naive" : ""));
        got[0] = json ? jsonField(*json, "gen_ms") : -1.0;
      });
    }
    rows.push_back(std::move(row));
  }
  if (!failure.empty()) std::fprintf(stderr, "warning: %s\n", failure.c_str());
  auto rate = [](double work, double ms) {
    char buf[32];
    if (ms <= 0) return std::string("-");
    const double v = work / (ms * 1e3);
    std::snprintf(buf, sizeof(buf), v < 10 ? "%.2f" : "%.1f", v);
    return std::string(buf);
  };
  std::printf("3D Perlin fBm, %llu^3 = %llu points, frequency 0.0173, lacunarity 2, gain 0.5; steady: median of %d "
              "runs (%s), columns in turn; M pts/s = points / median; M pt-oct/s = points x octaves / median; "
              "hardware threads: %d.\n\n| octaves |",
              static_cast<unsigned long long>(edge), static_cast<unsigned long long>(points), o.repeat,
              o.fresh_memory ? "fresh memory" : "buffer reused", effectiveThreads(Execution{Backend::kCpu, 0}));
  for (const Column& c : columns) std::printf(" %s ms |", c.label.c_str());
  std::printf(" serial / naive | best / serial | serial M pts/s | serial M pt-oct/s | best M pts/s | best M pt-oct/s |\n|---:|");
  for (size_t k = 0; k < columns.size(); ++k) std::printf("---:|");
  std::printf("---:|---:|---:|---:|---:|---:|\n");
  for (const NoiseRow& r : rows) {
    std::printf("| %d |", r.octaves);
    for (size_t k = 0; k < columns.size(); ++k) std::printf(" %s |", cell(r.steady.medianMs(k)).c_str());
    // serial (column 1) against naive (column 0), and the best later column against serial, paired by round.
    const Speedup vs_naive = pairedSpeedup(r.steady.runs[0], r.steady.runs[1]);
    Speedup best;
    double best_ms = r.steady.medianMs(1);
    for (size_t k = 2; k < columns.size(); ++k) {
      const Speedup s = pairedSpeedup(r.steady.runs[1], r.steady.runs[k]);
      if (s.valid() && (!best.valid() || s.median > best.median)) {
        best = s;
        best_ms = r.steady.medianMs(k);
      }
    }
    char a[32] = "-", b[32] = "-";
    if (vs_naive.valid()) std::snprintf(a, sizeof a, "%.2f×", vs_naive.median);
    if (best.valid()) std::snprintf(b, sizeof b, "%.2f×", best.median);
    const double n = double(points);
    std::printf(" %s | %s | %s | %s | %s | %s |\n", a, b, rate(n, r.steady.medianMs(1)).c_str(),
                rate(n * r.octaves, r.steady.medianMs(1)).c_str(), rate(n, best_ms).c_str(),
                rate(n * r.octaves, best_ms).c_str());
  }
  if (o.cold_runs > 0) {
    std::printf("\nCold: median of %d fresh `procgen noise perlin --size %llu --octaves N ... --stats-json -` "
                "processes (their gen_ms: generation only, first-touch page faults of the grid included).\n\n"
                "| octaves | column | cold ms | steady ms | cold / steady | cold M pts/s |\n|---:|---|---:|---:|---:|---:|\n",
                o.cold_runs, static_cast<unsigned long long>(edge));
    for (const NoiseRow& r : rows)
      for (size_t k = 0; k < columns.size(); ++k) {
        const double cold = r.cold.medianMs(k), steady = r.steady.medianMs(k);
        char ratio[32] = "-";
        if (cold >= 0 && steady > 0) std::snprintf(ratio, sizeof ratio, "%.2f", cold / steady);
        std::printf("| %d | %s | %s | %s | %s | %s |\n", r.octaves, columns[k].label.c_str(), cell(cold).c_str(),
                    cell(steady).c_str(), ratio, rate(double(points), cold).c_str());
      }
  }
  Json j;
  j["size"] = edge;
  j["points"] = points;
  j["columns"] = columnsJson(columns);
  Json& out_rows = j["rows"] = Json::array();
  for (const NoiseRow& r : rows) {
    Json row;
    row["octaves"] = r.octaves;
    Json ms = Json::array(), cold = Json::array();  // (a reference into an ordered_json dies with the next key)
    for (size_t k = 0; k < columns.size(); ++k) {
      ms.push_back(r.steady.medianMs(k));
      cold.push_back(r.cold.medianMs(k));
    }
    row["ms"] = std::move(ms);
    row["cold_ms"] = std::move(cold);
    out_rows.push_back(std::move(row));
  }
  o.outputs.writeStats(j);
}

/// `procgen bench floor` (the child of the floor columns): in this fresh
/// process, allocate `bytes` with the large-array allocator and store one
/// byte per 4 KiB page with `threads` std::threads, each its own contiguous
/// range (split on huge-page boundaries, as a parallel stage writes its
/// chunks); prints {"bytes", "threads", "ms"}. Timed: allocation and faults.
void runBenchFloor(uint64_t bytes, int threads) {
  if (bytes == 0 || threads < 1) throw Error("--bytes and --threads must be positive", ExitCode::kUsage);
  const auto t0 = std::chrono::steady_clock::now();
  auto* p = static_cast<volatile unsigned char*>(allocateLarge(bytes));
  const uint64_t per = (bytes / static_cast<uint64_t>(threads) + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  auto touch = [&](uint64_t w) {
    for (uint64_t i = w * per, end = std::min(bytes, (w + 1) * per); i < end; i += 4096) p[i] = 1;
  };
  std::vector<std::thread> helpers;
  for (int w = 1; w < threads && static_cast<uint64_t>(w) * per < bytes; ++w) helpers.emplace_back(touch, w);
  touch(0);
  for (std::thread& h : helpers) h.join();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  deallocateLarge(const_cast<unsigned char*>(p), bytes);
  std::printf("{\"bytes\": %llu, \"threads\": %d, \"ms\": %.4f}\n", static_cast<unsigned long long>(bytes), threads, ms);
}

// -- procgen bench octree (issue 18 point 9) ------------------------------------

/// Options of `procgen bench octree` beside the common ones.
struct OctreeBenchOptions {
  std::vector<uint64_t> points{1000000, 16000000};
  std::vector<std::string> distributions{"uniform", "plummer"};
  uint64_t queries = 100000;  ///< per query kind (locate: 10×), on the first size's uniform cloud
  uint32_t leaf_size = 16;
  bool sorted_points = true;  ///< the query tree keeps its sorted copy of the points
};

std::optional<PointDistribution> parseDistribution(const std::string& name) {
  for (PointDistribution d :
       {PointDistribution::kUniform, PointDistribution::kGaussian, PointDistribution::kPlummer})
    if (name == pointDistributionName(d)) return d;
  return std::nullopt;
}

/// The query kinds of the table; `arg` is what `procgen octree --query` writes after the colon.
enum class OctreeQueryKind { kLocate, kKnn8, kRadius, kBox };
constexpr OctreeQueryKind kOctreeQueryKinds[] = {OctreeQueryKind::kLocate, OctreeQueryKind::kKnn8,
                                                 OctreeQueryKind::kRadius, OctreeQueryKind::kBox};
const char* queryKindName(OctreeQueryKind kind) {
  switch (kind) {
    case OctreeQueryKind::kLocate:
      return "locate";
    case OctreeQueryKind::kKnn8:
      return "knn:8";
    case OctreeQueryKind::kRadius:
      return "radius";
    default:
      return "box";
  }
}
/// The kind in JSON keys ("knn8_ms": no colon, which jsonField would take for the key's end).
std::string queryKindKey(OctreeQueryKind kind) {
  std::string k = queryKindName(kind);
  k.erase(std::remove(k.begin(), k.end(), ':'), k.end());
  return k;
}
/// Locate is ~100× cheaper than the others: 10× the queries keeps its runs measurable.
uint64_t queryCount(OctreeQueryKind kind, uint64_t base) {
  return kind == OctreeQueryKind::kLocate ? 10 * base : base;
}

/// The query workload on n uniform points in the unit cube: uniform query
/// points (seed 77), a radius and a box side holding 8 points on average.
struct OctreeQueries {
  std::vector<double> xyz, boxes;
  double radius = 0;
  OctreeQueries(uint64_t n, uint64_t m) : xyz(3 * m), boxes(6 * m) {
    generatePoints(PointDistribution::kUniform, m, 77, xyz.data(), Execution{});
    radius = std::cbrt(8.0 / (static_cast<double>(n) * 4.18879020478639));  // (4/3)π r³ n = 8
    const double side = std::cbrt(8.0 / static_cast<double>(n));
    for (uint64_t q = 0; q < m; ++q)
      for (int a = 0; a < 3; ++a) {
        boxes[6 * q + a] = xyz[3 * q + a] - side / 2;
        boxes[6 * q + 3 + a] = xyz[3 * q + a] + side / 2;
      }
  }
};

/// Runs the first `m` queries of a kind; returns a value that depends on the answers.
uint64_t runOctreeQueries(const Octree& tree, const OctreePoints& points, const OctreeQueries& q,
                          OctreeQueryKind kind, uint64_t m, const Execution& execution) {
  switch (kind) {
    case OctreeQueryKind::kLocate: {
      OverwriteVector<uint32_t> out(m);
      octreeLocate(tree, q.xyz.data(), m, out.data(), execution);
      return out[m / 2];
    }
    case OctreeQueryKind::kKnn8: {
      OverwriteVector<uint32_t> out(8 * m);
      octreeKnn(tree, points, q.xyz.data(), m, 8, out.data(), nullptr, execution);
      return out[4 * m];
    }
    case OctreeQueryKind::kRadius:
      return octreeRadius(tree, points, q.xyz.data(), m, q.radius, execution).indices.size();
    default:
      return octreeBox(tree, points, q.boxes.data(), m, execution).indices.size();
  }
}

/// Bytes the build accounts for per point: keys, order and the sort's scratch
/// (24), the node arrays, the sorted copy and the data-split arrays.
double accountedBytesPerPoint(const Octree& t) {
  const double bytes = 24.0 * static_cast<double>(t.point_count) +
                       static_cast<double>(t.size()) * (1 + 8 + 4 + 4 + 4 + 4) +
                       static_cast<double>(t.xyz.size() * 8 + t.split_center.size() * 8 + t.chain.size());
  return bytes / static_cast<double>(t.point_count);
}

/// A /proc/self/status field in bytes (VmRSS, VmHWM); -1 when absent.
double procStatusBytes(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return 1024.0 * std::strtod(line.c_str() + key.size(), nullptr);
  return -1;
}

struct OctreeBuildRow {
  uint64_t points = 0;
  std::string distribution;
  StageTimes steady;
  OneShot cold, peak;  ///< per column: fresh-process build ms; peak RSS growth of the build, bytes per point
  double accounted = -1;  ///< bytes per point the build accounts for
  uint64_t nodes = 0;
};

struct OctreeQueryRow {
  OctreeQueryKind kind;
  uint64_t queries = 0;
  StageTimes steady;
  OneShot cold;
};

std::string rate(double items, double ms) {
  if (ms <= 0) return "-";
  char buf[32];
  const double v = items / (ms * 1e3);
  std::snprintf(buf, sizeof buf, v < 10 ? "%.2f" : "%.1f", v);
  return buf;
}

/// A column's cell: its median, or "unavailable" when the column threw (an
/// opencl build without octree stages, BackendUnavailableError).
std::string msOrUnavailable(const StageTimes& st, size_t k) {
  return st.runs[k].empty() ? "unavailable" : cell(st.medianMs(k));
}

std::string speedupCell(const StageTimes& st, size_t k) {
  const Speedup sp = k == 0 ? Speedup{} : st.speedup(k);
  if (!sp.valid()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f× (%.2f–%.2f)", sp.median, sp.q1, sp.q3);
  return buf;
}

/// `procgen bench octree`: the bucketed bottom-up build (leaf size 16) at
/// every size and distribution, and the four query kinds on the first size's
/// uniform cloud, on every column. Steady: median of --repeat runs in this
/// process, columns taking turns; cold: median of the figures fresh
/// `procgen bench octree-once` processes report for their first call (the
/// backend prepared while the points are generated, as the CLI overlaps it
/// with reading); peak: the growth of the fresh process's peak RSS during the
/// build, per point (the input points not included).
void runBenchOctree(const BenchOptions& o, const OctreeBenchOptions& ob) {
  if (o.repeat < 1) throw Error("--repeat must be at least 1", ExitCode::kUsage);
  std::vector<PointDistribution> dists;
  for (const std::string& name : ob.distributions) {
    const std::optional<PointDistribution> d = parseDistribution(name);
    if (!d) throw Error("unknown distribution '" + name + "' (uniform, gaussian, plummer)", ExitCode::kUsage);
    dists.push_back(*d);
  }
  for (uint64_t n : ob.points)
    if (n == 0 || n > kOctreeMaxPoints) throw Error("--points must be in 1 .. 2^32-2", ExitCode::kUsage);
  if (ob.points.empty() || dists.empty())
    throw Error("--points and --distributions need a value", ExitCode::kUsage);
  BenchOptions with_opencl = o;
  if (with_opencl.backends.empty()) {
    // Default columns: cpu, and opencl whenever the build has it — the
    // octree's opencl stages may be missing, which the table shows as
    // "unavailable" (BackendUnavailableError) rather than leaving the column out.
    with_opencl.backends = {"cpu"};
    if (backendAvailable(Backend::kOpenCL)) with_opencl.backends.push_back("opencl");
  }
  const std::vector<Column> columns = makeColumns(with_opencl);
  const Execution generator{backendAvailable(Backend::kCpu) ? Backend::kCpu : Backend::kSerial, 0};
  OctreeOptions options;
  options.leaf_size = ob.leaf_size;

  auto childArgs = [&](uint64_t n, PointDistribution d, const Column& c) {
    return "bench octree-once --points " + std::to_string(n) + " --distribution " + pointDistributionName(d) +
           " --leaf-size " + std::to_string(ob.leaf_size) + executionArgs(c);
  };
  std::vector<OctreeBuildRow> builds;
  for (uint64_t n : ob.points)
    for (PointDistribution d : dists) {
      if (stderrIsTerminal())
        std::fprintf(stderr, "bench octree: %llu %s points ...\n", static_cast<unsigned long long>(n),
                     pointDistributionName(d));
      OctreeBuildRow row;
      row.points = n;
      row.distribution = pointDistributionName(d);
      {
        std::vector<double> xyz(3 * n);
        generatePoints(d, n, 1, xyz.data(), generator);
        const OctreePoints pts = OctreePoints::of(xyz);
        {
          const Octree t = buildOctree(pts, options, Execution{});
          row.accounted = accountedBytesPerPoint(t);
          row.nodes = t.size();
        }
        std::string failure;
        row.steady = timeColumns(columns, o.repeat, o.fresh_memory, failure,
                                 [&](const Column& c) { (void)buildOctree(pts, options, c.execution); });
      }
      if (o.cold_runs > 0)
        oneShotRounds(columns, o.cold_runs, {&row.cold, &row.peak},
                      [&](const Column& c, std::vector<double>& got) {
                        const std::optional<std::string> json = runSelf(childArgs(n, d, c));
                        got[0] = json ? jsonField(*json, "build_ms") : -1.0;
                        const double peak = json ? jsonField(*json, "peak_bytes") : -1.0;
                        got[1] = peak >= 0 ? peak / static_cast<double>(n) : -1.0;
                      });
      builds.push_back(std::move(row));
    }

  // Queries: on the first size's uniform cloud, one tree (every backend builds the same one).
  const uint64_t qn = ob.points.front();
  std::vector<OctreeQueryRow> queries;
  if (ob.queries > 0) {
    if (stderrIsTerminal()) std::fprintf(stderr, "bench octree: queries ...\n");
    std::vector<double> xyz(3 * qn);
    generatePoints(PointDistribution::kUniform, qn, 1, xyz.data(), generator);
    const OctreePoints pts = OctreePoints::of(xyz);
    OctreeOptions qopt = options;
    qopt.sorted_points = ob.sorted_points;
    const Octree tree = buildOctree(pts, qopt, Execution{});
    const OctreeQueries q(qn, queryCount(OctreeQueryKind::kLocate, ob.queries));
    for (OctreeQueryKind kind : kOctreeQueryKinds) {
      OctreeQueryRow row;
      row.kind = kind;
      row.queries = queryCount(kind, ob.queries);
      std::string failure;
      row.steady = timeColumns(columns, o.repeat, o.fresh_memory, failure, [&](const Column& c) {
        (void)runOctreeQueries(tree, pts, q, kind, row.queries, c.execution);
      });
      queries.push_back(std::move(row));
    }
    if (o.cold_runs > 0) {
      std::vector<OneShot*> cold;
      for (OctreeQueryRow& r : queries) cold.push_back(&r.cold);
      oneShotRounds(columns, o.cold_runs, cold, [&](const Column& c, std::vector<double>& got) {
        const std::optional<std::string> json =
            runSelf(childArgs(qn, PointDistribution::kUniform, c) + " --queries " +
                    std::to_string(ob.queries) + (ob.sorted_points ? " --sorted-points" : ""));
        for (size_t i = 0; i < queries.size(); ++i)
          got[i] = json ? jsonField(*json, queryKindKey(queries[i].kind) + "_ms") : -1.0;
      });
    }
  }

  std::printf(
      "Octree builds (bucketed bottom-up, leaf size %u, seed 1); steady: median of %d runs (%s), columns in "
      "turn, speedup = median of per-round ratios against serial (IQR); cold: median of %d fresh processes' "
      "first build; peak: growth of a fresh process's peak RSS during the build per point (input not "
      "included); accounted: keys, order, sort scratch and nodes per point. Hardware threads: %d.\n\n",
      ob.leaf_size, o.repeat, o.fresh_memory ? "fresh memory" : "memory reused", o.cold_runs,
      effectiveThreads(Execution{Backend::kCpu, 0}));
  std::printf(
      "| points | distribution | column | steady ms | steady M pts/s | speedup (IQR) | cold ms | cold M "
      "pts/s | "
      "peak B/pt | accounted B/pt |\n|---:|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const OctreeBuildRow& r : builds)
    for (size_t k = 0; k < columns.size(); ++k) {
      char peak[32] = "-", accounted[32] = "-";
      if (r.peak.medianMs(k) >= 0) std::snprintf(peak, sizeof peak, "%.1f", r.peak.medianMs(k));
      if (r.accounted >= 0) std::snprintf(accounted, sizeof accounted, "%.1f", r.accounted);
      const double n = static_cast<double>(r.points);
      std::printf("| %llu | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                  static_cast<unsigned long long>(r.points), r.distribution.c_str(), columns[k].label.c_str(),
                  msOrUnavailable(r.steady, k).c_str(), rate(n, r.steady.medianMs(k)).c_str(),
                  speedupCell(r.steady, k).c_str(), cell(r.cold.medianMs(k)).c_str(),
                  rate(n, r.cold.medianMs(k)).c_str(), peak, accounted);
    }
  if (!queries.empty()) {
    std::printf(
        "\nQueries on %llu uniform points (leaf size %u%s): uniform query points in the unit cube; radius "
        "and "
        "box hold 8 points on average; M q/s = queries / median.\n\n| query | queries | column | steady ms | "
        "steady M q/s | speedup (IQR) | cold ms | cold M q/s |\n|---|---:|---|---:|---:|---:|---:|---:|\n",
        static_cast<unsigned long long>(qn), ob.leaf_size, ob.sorted_points ? ", sorted_points" : "");
    for (const OctreeQueryRow& r : queries)
      for (size_t k = 0; k < columns.size(); ++k) {
        const double m = static_cast<double>(r.queries);
        std::printf("| %s | %llu | %s | %s | %s | %s | %s | %s |\n", queryKindName(r.kind),
                    static_cast<unsigned long long>(r.queries), columns[k].label.c_str(),
                    msOrUnavailable(r.steady, k).c_str(), rate(m, r.steady.medianMs(k)).c_str(),
                    speedupCell(r.steady, k).c_str(), cell(r.cold.medianMs(k)).c_str(),
                    rate(m, r.cold.medianMs(k)).c_str());
      }
  }

  Json j;
  j["leaf_size"] = ob.leaf_size;
  j["columns"] = columnsJson(columns);
  auto perColumn = [&](auto&& value) {
    Json a = Json::array();
    for (size_t k = 0; k < columns.size(); ++k) a.push_back(value(k));
    return a;
  };
  // What every row has per column: steady median, whether the column ran, paired speedup, cold median.
  auto columnFigures = [&](Json& row, const StageTimes& steady, const OneShot& cold) {
    row["ms"] = perColumn([&](size_t k) { return steady.medianMs(k); });
    row["available"] = perColumn([&](size_t k) { return !steady.runs[k].empty(); });
    row["speedup"] = speedupsJson(steady);
    row["cold_ms"] = perColumn([&](size_t k) { return cold.medianMs(k); });
  };
  Json& jb = j["builds"] = Json::array();
  for (const OctreeBuildRow& r : builds) {
    Json row;
    row["points"] = r.points;
    row["distribution"] = r.distribution;
    row["nodes"] = r.nodes;
    columnFigures(row, r.steady, r.cold);
    row["peak_bytes_per_point"] = perColumn([&](size_t k) { return r.peak.medianMs(k); });
    row["accounted_bytes_per_point"] = r.accounted;
    jb.push_back(std::move(row));
  }
  Json& jq = j["queries"] = Json::array();
  for (const OctreeQueryRow& r : queries) {
    Json row;
    row["kind"] = queryKindName(r.kind);
    row["points"] = qn;
    row["queries"] = r.queries;
    row["sorted_points"] = ob.sorted_points;
    columnFigures(row, r.steady, r.cold);
    jq.push_back(std::move(row));
  }
  o.outputs.writeStats(j);
}

/// `procgen bench octree-once` (the child of the cold columns): in this fresh
/// process, prepare the backend, generate the points, then time the first
/// build (and with --queries the first call of every query kind on that
/// tree); prints {"build_ms", "peak_bytes", "nodes", "<kind>_ms"...}.
/// peak_bytes: VmHWM after the build minus VmRSS before it (the peak is reset
/// through /proc/self/clear_refs first; -1 where that is refused).
void runBenchOctreeOnce(uint64_t n, const std::string& distribution, uint32_t leaf_size,
                        const Execution& execution, uint64_t queries, bool sorted_points) {
  const std::optional<PointDistribution> d = parseDistribution(distribution);
  if (!d || n == 0 || n > kOctreeMaxPoints)
    throw Error("bench octree-once: bad --points or --distribution", ExitCode::kUsage);
  prepareBackend(execution);
  std::vector<double> xyz(3 * n);
  generatePoints(*d, n, 1, xyz.data(),
                 Execution{backendAvailable(Backend::kCpu) ? Backend::kCpu : Backend::kSerial, 0});
  const OctreePoints pts = OctreePoints::of(xyz);
  OctreeOptions options;
  options.leaf_size = leaf_size;
  options.sorted_points = sorted_points;
  bool peak_reset = false;
  {
    std::ofstream clear("/proc/self/clear_refs");
    peak_reset = static_cast<bool>(clear << "5" << std::flush);
  }
  const double rss_before = procStatusBytes("VmRSS");
  const auto t0 = std::chrono::steady_clock::now();
  const Octree tree = buildOctree(pts, options, execution);
  const double build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const double hwm = procStatusBytes("VmHWM");
  Json j;
  j["build_ms"] = build_ms;
  j["peak_bytes"] = peak_reset && hwm >= 0 && rss_before >= 0 ? hwm - rss_before : -1.0;
  j["nodes"] = tree.size();
  if (queries > 0) {
    const OctreeQueries q(n, queryCount(OctreeQueryKind::kLocate, queries));
    for (OctreeQueryKind kind : kOctreeQueryKinds) {
      const auto q0 = std::chrono::steady_clock::now();
      (void)runOctreeQueries(tree, pts, q, kind, queryCount(kind, queries), execution);
      j[queryKindKey(kind) + "_ms"] =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - q0).count();
    }
  }
  std::printf("%s\n", formatJson(j).c_str());
}

// -- procgen bench flame (issue 19 point 5) -------------------------------------

/// Options of `procgen bench flame` beside the common ones.
struct FlameBenchOptions {
  std::vector<std::string> files;  ///< genome files, one class each (default: examples/flames/*.flam3)
  int width = 1280, height = 720;
  double quality = 50;
  int peer_threads = 0;  ///< thread count of the end-to-end table; 0: the largest of --threads
  bool peer = true;      ///< run flam3-render beside procgen when it is installed
};

/// One genome class (one file): its flames at the bench's size and quality.
struct FlameClassRow {
  std::string name;  ///< the file's stem: linear, mixed, trig
  fs::path file;
  std::vector<FlameGenome> genomes;
  uint64_t samples = 0;  ///< plotted samples of all its flames
  double qs = 1, ss = 1;  ///< flam3-render's variables giving the bench's size and quality
  StageTimes render;                     ///< steady: renderFlame of every flame, wall ms
  std::vector<std::vector<double>> iter; ///< steady: per column, iteration ms of each timed round
  OneShot cold_wall, cold_iter;          ///< per column: fresh `procgen flame` wall ms and its iter_ms
  std::vector<double> peer_procgen, peer_flam3;  ///< end to end, fresh processes, rounds in turn (ms)
  std::string failure;
};

/// Milliseconds a shell command takes; -1 when it fails.
double timedShell(const std::string& command) {
  const auto t0 = std::chrono::steady_clock::now();
  const int status = std::system((command + " > /dev/null 2>&1").c_str());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return status == 0 ? ms : -1.0;
}

bool haveFlam3Render() { return std::system("command -v flam3-render > /dev/null 2>&1") == 0; }

/// The class of a genome file: its flames, and the qs/ss that make
/// flam3-render render them at the bench's size and quality (every flame of
/// the file must share size and quality, as flam3-render's variables apply
/// to all of them).
FlameClassRow loadFlameClass(const fs::path& file, const FlameBenchOptions& fb) {
  FlameClassRow row;
  row.file = file;
  row.name = file.stem().string();
  row.genomes = readFlameFile(file);
  const FlameGenome& first = row.genomes.front();
  for (const FlameGenome& g : row.genomes)
    if (g.width != first.width || g.height != first.height || g.quality != first.quality)
      throw Error(file.string() + ": its flames differ in size or quality; flam3-render's qs and ss would not give "
                  "every one " + std::to_string(fb.width) + "x" + std::to_string(fb.height) + " at one quality: give "
                  "one size per file",
                  ExitCode::kUsage);
  row.ss = static_cast<double>(fb.width) / first.width;
  row.qs = fb.quality / first.quality;
  if (static_cast<int>(first.height * row.ss) != fb.height)
    throw Error(file.string() + ": " + std::to_string(first.width) + "x" + std::to_string(first.height) +
                    " does not scale to " + std::to_string(fb.width) + "x" + std::to_string(fb.height) +
                    " (flam3-render's ss keeps the aspect ratio); choose --size with the genome's aspect",
                ExitCode::kUsage);
  FlameRenderOptions options;
  options.quality = fb.quality;
  options.width = fb.width;
  options.height = fb.height;
  for (const FlameGenome& g : row.genomes) row.samples += flameHistogramLayout(g, options).samples;
  return row;
}

std::string quoted(const fs::path& p) { return shellQuote(p.string()); }

/// `procgen bench flame`: samples/s per genome class on every column (steady
/// in this process, and cold: fresh `procgen flame` processes), and the end
/// to end wall time of `procgen flam3-render` beside flam3-render on the same
/// genome file with the same variables and thread count, in fresh processes
/// taking turns.
void runBenchFlame(const BenchOptions& o, const FlameBenchOptions& fb) {
  if (o.repeat < 1) throw Error("--repeat must be at least 1", ExitCode::kUsage);
  if (fb.width < 16 || fb.height < 16 || fb.width > 16384 || fb.height > 16384)
    throw Error("--size must be WxH within 16..16384", ExitCode::kUsage);
  if (!(fb.quality > 0) || !std::isfinite(fb.quality)) throw Error("--quality must be positive", ExitCode::kUsage);
  std::vector<fs::path> files(fb.files.begin(), fb.files.end());
  if (files.empty()) {
    fs::path dir = o.examples_dir.empty() ? fs::path("examples/flames") : fs::path(o.examples_dir);
    if (!fs::is_directory(dir)) dir = fs::path(PROCGEN_SOURCE_DIR) / "examples" / "flames";
    for (const char* c : {"linear", "mixed", "trig"}) files.push_back(dir / (std::string(c) + ".flam3"));
  }
  const std::vector<Column> columns = makeColumns(o);
  int peer_threads = fb.peer_threads;
  if (peer_threads <= 0)
    for (const Column& c : columns)
      if (c.execution.backend == Backend::kCpu) peer_threads = std::max(peer_threads, effectiveThreads(c.execution));
  if (peer_threads <= 0) peer_threads = 1;
  const bool peer = fb.peer && haveFlam3Render();
  if (fb.peer && !peer) std::fprintf(stderr, "warning: flam3-render not found (Debian flam3-utils): no peer column\n");

  const fs::path scratch = fs::temp_directory_path() / ("procgen_bench_flame_" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  struct RemoveScratch {
    fs::path dir;
    ~RemoveScratch() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } remove_scratch{scratch};
  const std::string size = std::to_string(fb.width) + "x" + std::to_string(fb.height);
  char quality_text[32];
  std::snprintf(quality_text, sizeof quality_text, "%.17g", fb.quality);

  std::vector<FlameClassRow> rows;
  for (const fs::path& file : files) {
    FlameClassRow row = loadFlameClass(file, fb);
    if (stderrIsTerminal()) std::fprintf(stderr, "bench flame: %s ...\n", row.name.c_str());
    FlameRenderOptions options;
    options.quality = fb.quality;
    options.width = fb.width;
    options.height = fb.height;
    row.iter.assign(columns.size(), {});
    row.render = timeColumns(columns, o.repeat, o.fresh_memory, row.failure, [&](const Column& c) {
      double iter_ms = 0;
      for (const FlameGenome& g : row.genomes) {
        FlameRenderStats stats;
        (void)renderFlame(g, options, c.execution, &stats);
        iter_ms += stats.iter_ms;
      }
      row.iter[static_cast<size_t>(&c - columns.data())].push_back(iter_ms);
    });
    for (std::vector<double>& v : row.iter)
      if (!v.empty()) v.erase(v.begin());  // the untimed warm-up run
    if (o.cold_runs > 0) {
      const std::string args = "flame " + quoted(row.file) + " --size " + size + " --quality " + quality_text +
                               " -q --stats-json - -o " + quoted(scratch / "cold.png");
      oneShotRounds(columns, o.cold_runs, {&row.cold_wall, &row.cold_iter},
                    [&](const Column& c, std::vector<double>& got) {
                      const auto t0 = std::chrono::steady_clock::now();
                      const std::optional<std::string> json = runSelf(args + executionArgs(c));
                      got[0] = json ? std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                                          .count()
                                    : -1.0;
                      got[1] = json ? jsonField(*json, "iter_ms") : -1.0;
                    });
    }
    if (peer) {
      std::error_code ec;
      const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
      char vars[256];
      std::snprintf(vars, sizeof vars, "env qs=%.17g ss=%.17g nthreads=%d isaac_seed=1 verbose=0 ", row.qs, row.ss,
                    peer_threads);
      const std::string in = " in=" + quoted(row.file) + " prefix=" + quoted(scratch / "peer.");
      for (int r = 0; r < std::max(1, o.cold_runs); ++r) {
        // Take turns, starting with the other program every round.
        const double a = timedShell(vars + in + " " + (r % 2 ? "flam3-render" : shellQuote(self) + " flam3-render"));
        const double b = timedShell(vars + in + " " + (r % 2 ? shellQuote(self) + " flam3-render" : "flam3-render"));
        row.peer_procgen.push_back(r % 2 ? b : a);
        row.peer_flam3.push_back(r % 2 ? a : b);
      }
    }
    if (!row.failure.empty()) std::fprintf(stderr, "warning: %s: %s\n", row.name.c_str(), row.failure.c_str());
    rows.push_back(std::move(row));
  }

  auto medianOr = [](const std::vector<double>& v) {
    std::vector<double> ok;
    for (double x : v)
      if (x >= 0) ok.push_back(x);
    return ok.empty() ? -1.0 : median(ok);
  };
  std::printf("Flames at %dx%d, quality %s (plotted samples = quality x width x height per flame); steady: median of "
              "%d runs in this process (%s), columns in turn, speedup = median of per-round ratios against serial "
              "(IQR); M samples/s = samples / iteration ms; cold: median of %d fresh `procgen flame FILE --size %s "
              "--quality %s -o x.png` processes (wall: process start to exit, PNG written). Hardware threads: %d.\n\n",
              fb.width, fb.height, quality_text, o.repeat, o.fresh_memory ? "fresh memory" : "memory reused",
              o.cold_runs, size.c_str(), quality_text, effectiveThreads(Execution{Backend::kCpu, 0}));
  std::printf("| class | flames | M samples | column | iterate ms | M samples/s | render ms | speedup (IQR) | cold "
              "M samples/s | cold wall ms |\n|---|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
  for (const FlameClassRow& r : rows)
    for (size_t k = 0; k < columns.size(); ++k) {
      const double iter_ms = medianOr(r.iter[k]);
      const double n = static_cast<double>(r.samples);
      std::printf("| %s | %zu | %.2f | %s | %s | %s | %s | %s | %s | %s |\n", r.name.c_str(), r.genomes.size(), n / 1e6,
                  columns[k].label.c_str(), cell(iter_ms).c_str(), rate(n, iter_ms).c_str(),
                  msOrUnavailable(r.render, k).c_str(), speedupCell(r.render, k).c_str(),
                  rate(n, r.cold_iter.medianMs(k)).c_str(), cell(r.cold_wall.medianMs(k)).c_str());
    }
  if (peer) {
    std::printf("\nEnd to end beside flam3-render (Debian flam3-utils): the same genome file and variables "
                "(qs, ss giving %dx%d at quality %s, nthreads=%d, isaac_seed=1), `procgen flam3-render` and "
                "`flam3-render` in fresh processes taking turns, %d rounds; wall time from start to exit (genome "
                "read, every flame rendered, PNGs written); speedup = median of per-round ratios (IQR); target: "
                ">= 3x.\n\n| class | flames | procgen s | flam3-render s | speedup (IQR) | target |\n"
                "|---|---:|---:|---:|---:|---|\n",
                fb.width, fb.height, quality_text, peer_threads, std::max(1, o.cold_runs));
    for (const FlameClassRow& r : rows) {
      const Speedup sp = pairedSpeedup(r.peer_flam3, r.peer_procgen);
      char speed[64] = "-";
      if (sp.valid()) std::snprintf(speed, sizeof speed, "%.2f× (%.2f–%.2f)", sp.median, sp.q1, sp.q3);
      const double p = medianOr(r.peer_procgen), f = medianOr(r.peer_flam3);
      char ps[32] = "-", fs_[32] = "-";
      if (p >= 0) std::snprintf(ps, sizeof ps, "%.2f", p / 1e3);
      if (f >= 0) std::snprintf(fs_, sizeof fs_, "%.2f", f / 1e3);
      std::printf("| %s | %zu | %s | %s | %s | %s |\n", r.name.c_str(), r.genomes.size(), ps, fs_, speed,
                  !sp.valid() ? "-" : sp.median >= 3.0 ? "yes" : "**no**");
    }
  }

  Json j;
  j["width"] = fb.width;
  j["height"] = fb.height;
  j["quality"] = fb.quality;
  j["columns"] = columnsJson(columns);
  j["peer_threads"] = peer_threads;
  j["peer"] = peer;
  Json classes = Json::array();
  for (const FlameClassRow& r : rows) {
    Json row;
    row["class"] = r.name;
    row["file"] = r.file.string();
    row["flames"] = r.genomes.size();
    row["samples"] = r.samples;
    Json iter = Json::array(), msps = Json::array(), render = Json::array(), cold_wall = Json::array(),
         cold_msps = Json::array();
    for (size_t k = 0; k < columns.size(); ++k) {
      const double it = medianOr(r.iter[k]);
      iter.push_back(it);
      msps.push_back(it > 0 ? static_cast<double>(r.samples) / (it * 1e3) : -1.0);
      render.push_back(r.render.medianMs(k));
      cold_wall.push_back(r.cold_wall.medianMs(k));
      const double ci = r.cold_iter.medianMs(k);
      cold_msps.push_back(ci > 0 ? static_cast<double>(r.samples) / (ci * 1e3) : -1.0);
    }
    row["iter_ms"] = std::move(iter);
    row["msamples_per_s"] = std::move(msps);
    row["render_ms"] = std::move(render);
    row["speedup"] = speedupsJson(r.render);
    row["cold_wall_ms"] = std::move(cold_wall);
    row["cold_msamples_per_s"] = std::move(cold_msps);
    if (peer) {
      row["procgen_flam3_render_ms"] = medianOr(r.peer_procgen);
      row["flam3_render_ms"] = medianOr(r.peer_flam3);
      const Speedup sp = pairedSpeedup(r.peer_flam3, r.peer_procgen);
      row["speedup_vs_flam3"] =
          sp.valid() ? Json{{"median", sp.median}, {"q1", sp.q1}, {"q3", sp.q3}} : Json(nullptr);
    }
    classes.push_back(std::move(row));
  }
  j["classes"] = std::move(classes);
  o.outputs.writeStats(j);
}

void setupBench(CLI::App& app) {
  CLI::App* bench =
      app.add_subcommand("bench", "Benchmarks measured side by side in one run (paper Table 2)");
  bench->require_subcommand(1);
  auto args = std::make_shared<BenchOptions>();
  CLI::App* cmd = bench->add_subcommand(
      "lsystem",
      "Derivation and interpretation times per model: serial against every backend and thread count");
  cmd->add_option(
      "files", args->files,
      "L-system (.l) or scene (.scene) files (default: the paper's Table 1 models and the forest scene)");
  cmd->add_option("--examples", args->examples_dir,
                  "Folder of the Table 1 models (default: examples/lsystems)");
  auto common = [](CLI::App* c, BenchOptions& a) {
    c->add_option("--backends", a.backends, "Backends beside serial (default: cpu, and opencl when a device exists)")
        ->delimiter(',');
    addInteger(*c, "--threads", a.threads, "Thread counts to run (default: 1, 2, 4 ... all)", 1)->delimiter(',');
    addInteger(*c, "--repeat", a.repeat, "Runs per cell; the table shows the median", 1)->capture_default_str();
    a.outputs.addStatsJson(*c, "Also write the figures as JSON to PATH, or - for stdout", "--json");
    c->add_flag("--fresh-memory", a.fresh_memory,
                "Return memory to the system after every run, so each run pays first-touch page faults "
                "(default: memory is reused between runs, the steady state of repeated generation)");
    addInteger(*c, "--cold-runs", a.cold_runs, "Fresh processes per cold and floor cell (0: steady state only)", 0)
        ->capture_default_str();
  };
  common(cmd, *args);
  cmd->callback([args] { runBenchLsystem(*args); });

  auto pargs = std::make_shared<BenchOptions>();
  pargs->repeat = 15;
  CLI::App* parens = bench->add_subcommand(
      "parens", "Parentheses matching: steady state, fresh processes (cold) and the page-fault floor per column");
  addInteger(*parens, "--elements", pargs->elements, "Random parentheses to match", 1, kMaxInt32Elements)
      ->capture_default_str();
  common(parens, *pargs);
  parens->callback([pargs] { runBenchParens(*pargs); });

  auto nargs = std::make_shared<BenchOptions>();
  nargs->cold_runs = 3;
  nargs->threads = {1, 2};
  auto noise_octaves = std::make_shared<std::vector<int>>(std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8});
  auto noise_size = std::make_shared<uint64_t>(128);
  CLI::App* noise = bench->add_subcommand(
      "noise", "The noise seed's table: ms per 128^3 Perlin fBm volume for octaves 1-8, naive and every backend");
  noise->add_option("--octaves", *noise_octaves, "Octave counts, one row each (default 1,2,...,8)")->delimiter(',');
  noise->add_option("--size", *noise_size, "Volume edge in samples")->capture_default_str();
  common(noise, *nargs);
  noise->callback([nargs, noise_octaves, noise_size] { runBenchNoise(*nargs, *noise_octaves, *noise_size); });

  auto oargs = std::make_shared<BenchOptions>();
  oargs->cold_runs = 3;
  oargs->threads = {1, 2};
  auto ob = std::make_shared<OctreeBenchOptions>();
  CLI::App* octree = bench->add_subcommand(
      "octree",
      "Octree builds (points/s, peak bytes per point) and queries (queries/s) per backend and thread count");
  octree->add_option("--points", ob->points, "Point counts, one row each (default 1000000,16000000)")
      ->delimiter(',');
  octree
      ->add_option("--distributions", ob->distributions,
                   "uniform, gaussian, plummer (default uniform,plummer)")
      ->delimiter(',');
  addInteger(*octree, "--queries", ob->queries, "Queries per kind, 10x for locate (0: no query table)", 0)
      ->capture_default_str();
  addInteger(*octree, "--leaf-size", ob->leaf_size, "Points per leaf at most", 1)->capture_default_str();
  octree->add_flag("!--no-sorted-points", ob->sorted_points,
                   "Query a tree without its sorted copy of the points (gathering them from the input)");
  common(octree, *oargs);
  octree->callback([oargs, ob] { runBenchOctree(*oargs, *ob); });

  auto fargs = std::make_shared<BenchOptions>();
  fargs->repeat = 3;
  fargs->cold_runs = 3;
  fargs->threads = {2};
  auto fb = std::make_shared<FlameBenchOptions>();
  auto flame_size = std::make_shared<std::string>("1280x720");
  CLI::App* flame = bench->add_subcommand(
      "flame", "Fractal flames: samples/s per genome class on every column, and end to end beside flam3-render");
  flame->add_option("files", fb->files,
                    "flam3 genome files, one class each (default: examples/flames/linear, mixed, trig.flam3)");
  flame->add_option("--examples", fargs->examples_dir, "Folder of the default genomes (default: examples/flames)");
  flame->add_option("--size", *flame_size, "Image size WxH")->capture_default_str();
  flame->add_option("--quality", fb->quality, "Samples per pixel")->capture_default_str();
  addInteger(*flame, "--peer-threads", fb->peer_threads,
             "Threads of the end-to-end table, both programs (default: the largest --threads)", 1);
  flame->add_flag("!--no-peer", fb->peer, "Do not run flam3-render");
  common(flame, *fargs);
  flame->callback([fargs, fb, flame_size] {
    const size_t x = flame_size->find('x');
    try {
      if (x == std::string::npos) throw std::invalid_argument("x");
      size_t used = 0;
      fb->width = std::stoi(flame_size->substr(0, x), &used);
      if (used != x) throw std::invalid_argument("w");
      fb->height = std::stoi(flame_size->substr(x + 1), &used);
      if (used != flame_size->size() - x - 1) throw std::invalid_argument("h");
    } catch (const std::exception&) {
      throw Error("--size must be WxH, e.g. 1280x720", ExitCode::kUsage);
    }
    runBenchFlame(*fargs, *fb);
  });

  auto once = std::make_shared<OctreeBenchOptions>();
  auto once_dist = std::make_shared<std::string>("uniform");
  auto once_backend = std::make_shared<std::string>("serial");
  auto once_threads = std::make_shared<int>(1);
  auto once_points = std::make_shared<uint64_t>(1000000);
  auto once_sorted = std::make_shared<bool>(false);
  once->queries = 0;
  CLI::App* octree_once = bench->add_subcommand(
      "octree-once",
      "(the child of bench octree's cold columns) One build, and optionally one call per query kind");
  addInteger(*octree_once, "--points", *once_points, "Points", 1);
  octree_once->add_option("--distribution", *once_dist, "uniform, gaussian, plummer");
  addInteger(*octree_once, "--leaf-size", once->leaf_size, "Points per leaf at most", 1);
  octree_once->add_option("--backend", *once_backend, "serial, cpu, opencl");
  addInteger(*octree_once, "--threads", *once_threads, "Threads", 0);
  addInteger(*octree_once, "--queries", once->queries, "Queries per kind (0: none)", 0);
  octree_once->add_flag("--sorted-points", *once_sorted, "Keep the sorted copy of the points");
  octree_once->group("");  // internal: not listed in --help
  octree_once->callback([=] {
    const std::optional<Backend> b = parseBackend(*once_backend);
    if (!b) throw Error("unknown backend '" + *once_backend + "'", ExitCode::kUsage);
    runBenchOctreeOnce(*once_points, *once_dist, once->leaf_size, Execution{*b, *once_threads}, once->queries,
                       *once_sorted);
  });

  auto floor_bytes = std::make_shared<uint64_t>(0);
  auto floor_threads = std::make_shared<int>(1);
  CLI::App* floor = bench->add_subcommand(
      "floor", "(the child of the floor columns) Time to allocate and fault in BYTES with THREADS threads");
  addInteger(*floor, "--bytes", *floor_bytes, "Bytes to fault in", 1)->required();
  addInteger(*floor, "--threads", *floor_threads, "Threads", 1)->capture_default_str();
  floor->group("");  // internal: not listed in --help
  floor->callback([floor_bytes, floor_threads] { runBenchFloor(*floor_bytes, *floor_threads); });
}

PROCGEN_REGISTER_COMMAND(90, setupBench);

}  // namespace
}  // namespace procgen::cli

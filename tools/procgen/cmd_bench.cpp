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
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <malloc.h>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_stats.hpp"
#include "cli.hpp"
#include "output_options.hpp"
#include "procgen/lsystem.hpp"
#include "procgen/opencl.hpp"
#include "procgen/scene.hpp"

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

struct Row {
  std::string model;
  int iterations = 0;
  uint64_t modules = 0;
  uint64_t modules_total = 0;
  StageTimes derive;
  StageTimes interpret;
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
StageTimes timeColumns(const std::vector<Column>& columns, int repeat, std::string& failure, Run&& run) {
  const size_t n = columns.size();
  std::vector<bool> failed(n, false);
  std::vector<std::vector<double>> ms(n);
  auto attempt = [&](size_t c, bool timed) {
    if (failed[c]) return;
    try {
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

/// A scene file (paper §6): all instances derived in batched passes, then drawn.
Row benchScene(const fs::path& file, const std::vector<Column>& columns, int repeat) {
  const LSystemScene scene = LSystemScene::fromFile(file);
  Row row;
  row.model = file.filename().string();
  const LSystemSceneDerivation derived = deriveScene(scene, DeriveOptions{});
  for (const DeriveStats& st : derived.stats) {
    row.iterations = std::max(row.iterations, st.iterations);
    row.modules_total += st.modules_total;
  }
  row.modules = derived.string.size();
  row.derive = timeColumns(columns, repeat, row.failure, [&](const Column& c) {
    DeriveOptions dopt;
    dopt.execution = c.execution;
    (void)deriveScene(scene, dopt);
  });
  row.interpret = timeColumns(columns, repeat, row.failure,
                              [&](const Column& c) { (void)interpretScene(scene, derived, c.execution); });
  return row;
}

Row benchModel(const fs::path& file, const std::vector<Column>& columns, int repeat) {
  if (file.extension() == ".scene") return benchScene(file, columns, repeat);
  const LSystem lsystem = LSystem::fromFile(file);
  Row row;
  row.model = lsystem.name();
  DeriveStats stats;
  const ModuleString string = derive(lsystem, DeriveOptions{}, &stats);
  row.iterations = stats.iterations;
  row.modules = stats.modules;
  row.modules_total = stats.modules_total;
  row.derive = timeColumns(columns, repeat, row.failure, [&](const Column& c) {
    DeriveOptions dopt;
    dopt.execution = c.execution;
    (void)derive(lsystem, dopt);
  });
  row.interpret = timeColumns(columns, repeat, row.failure, [&](const Column& c) {
    InterpretOptions iopt;
    iopt.view = lsystem.view();
    iopt.execution = c.execution;
    (void)interpret(lsystem, string, iopt);
  });
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

Json benchJson(const std::vector<Row>& rows, const std::vector<Column>& columns) {
  Json j;
  Json& cols = j["columns"] = Json::array();
  for (const Column& c : columns) {
    Json col;
    col["label"] = c.label;
    col["backend"] = std::string(backendName(c.execution.backend));
    col["threads"] = effectiveThreads(c.execution);
    if (!c.device.empty()) col["device"] = c.device;
    cols.push_back(std::move(col));
  }
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
      // Per column, against serial: {median, q1, q3} of the per-round ratios (null: serial or failed).
      Json& speedups = r[name + "_speedup"] = Json::array();
      for (size_t k = 0; k < st.runs.size(); ++k) {
        const Speedup s = k == 0 ? Speedup{} : st.speedup(k);
        if (s.valid()) speedups.push_back({{"median", s.median}, {"q1", s.q1}, {"q3", s.q3}});
        else speedups.push_back(nullptr);
      }
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
    rows.push_back(benchModel(f, columns, o.repeat));
    if (!rows.back().failure.empty())
      std::fprintf(stderr, "warning: %s: %s\n", rows.back().model.c_str(), rows.back().failure.c_str());
  }
  std::printf("Median of %d runs per cell (%s); speedups are medians of the per-round ratios "
              "against serial; hardware threads: %d.\n\n%s",
              o.repeat,
              o.fresh_memory ? "fresh memory: first-touch page faults included" : "memory reused between runs",
              effectiveThreads(Execution{Backend::kCpu, 0}), formatTable(rows, columns).c_str());
  o.outputs.writeStats(benchJson(rows, columns));
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
  cmd->add_option("--backends", args->backends,
                  "Backends beside serial (default: cpu, and opencl when a device exists)")
      ->delimiter(',');
  cmd->add_option("--threads", args->threads, "Thread counts to run (default: 1, 2, 4 ... all)")
      ->delimiter(',');
  cmd->add_option("--repeat", args->repeat, "Runs per cell; the table shows the median")
      ->capture_default_str();
  args->outputs.addStatsJson(*cmd, "Also write the figures as JSON to PATH, or - for stdout", "--json");
  cmd->add_flag("--fresh-memory", args->fresh_memory,
                "Return memory to the system after every run, so each run pays first-touch page faults "
                "(default: memory is reused between runs, the steady state of repeated generation)");
  cmd->callback([args] { runBenchLsystem(*args); });
}

PROCGEN_REGISTER_COMMAND(90, setupBench);

}  // namespace
}  // namespace procgen::cli

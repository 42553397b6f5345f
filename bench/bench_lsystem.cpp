// L-system derivation and interpretation throughput, per example model (issue 2,
// paper Table 2's serial column). Every model in examples/lsystems runs at its
// file's derivation length (the paper's iteration counts for the Table 1
// models); the counter `modules/s` is final-string modules per second for
// interpretation and modules produced by all steps (modules_total) per second
// for derivation.
//
//   build/bench/procgen_bench --benchmark_filter=LSystem
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> exampleFiles() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(PROCGEN_SOURCE_DIR) / "examples" / "lsystems"))
    if (entry.path().extension() == ".l") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

procgen::Execution execution(procgen::Backend backend, int threads) {
  procgen::Execution e;
  e.backend = backend;
  e.threads = threads;
  return e;
}

void deriveBenchmark(benchmark::State& state, const procgen::LSystem& lsystem, procgen::Execution exec) {
  procgen::DeriveOptions options;
  options.execution = exec;
  procgen::DeriveStats stats;
  try {
    for (auto _ : state) {
      procgen::ModuleString s = procgen::derive(lsystem, options, &stats);
      benchmark::DoNotOptimize(s.symbols.data());
    }
  } catch (const procgen::Error& e) {  // e.g. a backend not built in yet
    state.SkipWithError(e.what());
    return;
  }
  state.counters["modules"] = static_cast<double>(stats.modules);
  state.counters["modules/s"] = benchmark::Counter(static_cast<double>(stats.modules_total) * state.iterations(),
                                                   benchmark::Counter::kIsRate);
}

void interpretBenchmark(benchmark::State& state, const procgen::LSystem& lsystem, procgen::Execution exec) {
  procgen::DeriveOptions derive_options;
  const procgen::ModuleString s = procgen::derive(lsystem, derive_options);
  procgen::InterpretOptions options;
  options.view = lsystem.view();
  options.execution = exec;
  size_t segments = 0;
  try {
    for (auto _ : state) {
      procgen::Geometry g = procgen::interpret(lsystem, s, options);
      segments = g.segments.size();
      benchmark::DoNotOptimize(g.segments.data());
    }
  } catch (const procgen::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  state.counters["modules"] = static_cast<double>(s.size());
  state.counters["segments"] = static_cast<double>(segments);
  state.counters["modules/s"] =
      benchmark::Counter(static_cast<double>(s.size()) * state.iterations(), benchmark::Counter::kIsRate);
}

// Registered at startup so the list follows the examples folder.
const bool registered = [] {
  for (const fs::path& file : exampleFiles()) {
    const procgen::LSystem lsystem = procgen::LSystem::fromFile(file);
    const std::string name = file.stem().string();
    const std::string n = "/n=" + std::to_string(lsystem.derivationLength());
    struct Variant {
      const char* label;
      procgen::Backend backend;
      int threads;
    };
    std::vector<Variant> variants{{"serial", procgen::Backend::kSerial, 1}};
#if PROCGEN_HAVE_TBB
    variants.push_back({"cpu", procgen::Backend::kCpu, 0});
#endif
    for (const Variant& v : variants) {
      const procgen::Execution exec = execution(v.backend, v.threads);
      benchmark::RegisterBenchmark(("LSystemDerive/" + name + n + "/" + v.label).c_str(),
                                   [lsystem, exec](benchmark::State& st) { deriveBenchmark(st, lsystem, exec); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
      benchmark::RegisterBenchmark(("LSystemInterpret/" + name + n + "/" + v.label).c_str(),
                                   [lsystem, exec](benchmark::State& st) { interpretBenchmark(st, lsystem, exec); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  return true;
}();

}  // namespace

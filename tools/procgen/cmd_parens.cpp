// procgen parens: parentheses matching (procgen/treebox.hpp) on a file or a
// random sequence, with the output array and statistics.
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include "cli.hpp"
#include "output_options.hpp"
#include "procgen/budget.hpp"
#include "procgen/input.hpp"
#include "procgen/treebox.hpp"

namespace procgen::cli {
namespace {

struct ParensOptions {
  std::string file;
  uint64_t random = 0;
  uint64_t seed = 1;
  double depth_bias = 0.5;
  CommandOutputs outputs;
  ExecutionOptions execution;
};

OverwriteVector<uint8_t> readBytes(const std::string& path) {
  const std::string s = readInputFile(path, "parentheses file");  // refuses directories and devices
  return OverwriteVector<uint8_t>(s.begin(), s.end());
}

/// What a run on `n` elements allocates (input bytes, output array, and the
/// text of -o when asked for), checked against the memory budget before any
/// of it is allocated: `--random 18446744073709551615` stops here.
void requireParensMemory(uint64_t n, bool text_output) {
  const uint64_t index_bytes = n <= kMaxInt32Elements ? sizeof(int32_t) : sizeof(int64_t);
  const uint64_t per_element = 1 + index_bytes + (text_output ? 21 : 0);  // up to 20 digits and '\n'
  const std::optional<uint64_t> bytes = checkedMul(n, per_element);
  requireMemory("parens on " + std::to_string(n) + " elements", bytes.value_or(UINT64_MAX));
}

template <typename Index>
void runParens(const ParensOptions& o, const Execution& ex, const OverwriteVector<uint8_t>& input) {
  const uint64_t n = input.size();
  // Huge-page memory left unwritten: the matching threads fault it in as they
  // write their chunks, which is part of the reported time (issue 15).
  OverwriteVector<Index> out(n == 0 ? 1 : n);
  auto t0 = std::chrono::steady_clock::now();
  MatchStats st = matchSymbols(input.data(), n, '(', ')', out.data(), ex);
  auto t1 = std::chrono::steady_clock::now();
  double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  if (!o.outputs.paths.empty()) {
    std::string text;
    text.reserve(n * 8);
    char buf[24];
    for (uint64_t i = 0; i < n; ++i) {
      int len = std::snprintf(buf, sizeof(buf), "%lld\n", static_cast<long long>(out[i]));
      text.append(buf, static_cast<size_t>(len));
    }
    o.outputs.writeAll(text);
  }
  // The checksum reads all 4n output bytes byte by byte (FNV-1a): several
  // times the matching itself, so only when the statistics are asked for.
  if (o.outputs.stats_json.empty()) return;
  Json stats;
  stats["elements"] = st.elements;
  stats["unmatched_open"] = st.unmatched_open;
  stats["unmatched_close"] = st.unmatched_close;
  stats["max_depth"] = st.max_depth;
  stats["ms"] = ms;
  stats["checksum"] = hex64(matchChecksum(out.data(), n));
  stats["backend"] = std::string(backendName(ex.backend));
  stats["threads"] = effectiveThreads(ex);
  o.outputs.writeStats(stats);
}

void setupParens(CLI::App& app) {
  auto o = std::make_shared<ParensOptions>();
  CLI::App* cmd = app.add_subcommand(
      "parens",
      "Match parentheses: for every ')' the index of its '(', for every other element the "
      "index of the innermost enclosing '(' (-1 at top level)");
  auto* file = cmd->add_option("FILE", o->file,
                               "Input: '(' opens, ')' closes, any other byte is a plain element");
  auto* random = addInteger(*cmd, "--random", o->random, "Match N random parentheses instead of a file")
                     ->group("Input");
  file->excludes(random);
  addInteger(*cmd, "--seed", o->seed, "Seed of --random")->capture_default_str()->group("Input");
  cmd->add_option("--depth-bias", o->depth_bias,
                  "Probability that --random pushes (always when the stack is empty)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str()
      ->group("Input");
  o->outputs.addOutputs(*cmd, "Write the output array, one integer per line ('-' = stdout)", "", "-o");
  o->outputs.addStatsJson(*cmd,
                          "Write elements, unmatched_open, unmatched_close, max_depth, ms, checksum as "
                          "one JSON object to PATH ('-' = stdout)");
  o->execution.add(*cmd);
  cmd->callback([o, cmd] {
    if (o->file.empty() && cmd->count("--random") == 0)
      throw CLI::ValidationError("parens", "give FILE or --random N");
    Execution ex = o->execution.resolve();
    OverwriteVector<uint8_t> input;
    if (!o->file.empty()) {
      input = readBytes(o->file);
      requireParensMemory(input.size(), !o->outputs.paths.empty());
    } else {
      requireParensMemory(o->random, !o->outputs.paths.empty());
      input.resize(o->random);
      randomParentheses(o->random, o->seed, o->depth_bias, input.data());
    }
    if (input.size() <= kMaxInt32Elements) runParens<int32_t>(*o, ex, input);
    else runParens<int64_t>(*o, ex, input);
  });
}

}  // namespace

PROCGEN_REGISTER_COMMAND(30, setupParens);

}  // namespace procgen::cli

// procgen parens: parentheses matching (procgen/treebox.hpp) on a file or a
// random sequence, with the output array and statistics.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "cli.hpp"
#include "procgen/treebox.hpp"

namespace procgen::cli {
namespace {

struct ParensOptions {
  std::string file;
  uint64_t random = 0;
  uint64_t seed = 1;
  double depth_bias = 0.5;
  std::string output;
  std::string stats_json;
  ExecutionOptions execution;
};

OverwriteVector<uint8_t> readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "'");
  std::ostringstream buf;
  buf << in.rdbuf();
  std::string s = buf.str();
  return OverwriteVector<uint8_t>(s.begin(), s.end());
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
  if (!o.output.empty()) {
    std::string text;
    text.reserve(n * 8);
    char buf[24];
    for (uint64_t i = 0; i < n; ++i) {
      int len = std::snprintf(buf, sizeof(buf), "%lld\n", static_cast<long long>(out[i]));
      text.append(buf, static_cast<size_t>(len));
    }
    writeTextOutput(o.output, text);
  }
  if (!o.stats_json.empty()) {
    char json[512];
    std::snprintf(json, sizeof(json),
                  "{\"elements\": %llu, \"unmatched_open\": %llu, \"unmatched_close\": %llu, "
                  "\"max_depth\": %llu, \"ms\": %.3f, \"checksum\": \"%016llx\", "
                  "\"backend\": \"%s\", \"threads\": %d}\n",
                  static_cast<unsigned long long>(st.elements),
                  static_cast<unsigned long long>(st.unmatched_open),
                  static_cast<unsigned long long>(st.unmatched_close),
                  static_cast<unsigned long long>(st.max_depth), ms,
                  static_cast<unsigned long long>(matchChecksum(out.data(), n)),
                  std::string(backendName(ex.backend)).c_str(), effectiveThreads(ex));
    writeTextOutput(o.stats_json, json);
  }
}

void setupParens(CLI::App& app) {
  auto o = std::make_shared<ParensOptions>();
  CLI::App* cmd = app.add_subcommand(
      "parens",
      "Match parentheses: for every ')' the index of its '(', for every other element the "
      "index of the innermost enclosing '(' (-1 at top level)");
  auto* file = cmd->add_option("FILE", o->file,
                               "Input: '(' opens, ')' closes, any other byte is a plain element");
  auto* random = cmd->add_option("--random", o->random,
                                 "Match N random parentheses instead of a file")
                     ->group("Input");
  file->excludes(random);
  cmd->add_option("--seed", o->seed, "Seed of --random")->capture_default_str()->group("Input");
  cmd->add_option("--depth-bias", o->depth_bias,
                  "Probability that --random pushes (always when the stack is empty)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str()
      ->group("Input");
  cmd->add_option("-o", o->output, "Write the output array, one integer per line ('-' = stdout)")
      ->group("Output");
  cmd->add_option("--stats-json", o->stats_json,
                  "Write elements, unmatched_open, unmatched_close, max_depth, ms, checksum as "
                  "one JSON object to PATH ('-' = stdout)")
      ->group("Output");
  o->execution.add(*cmd);
  cmd->callback([o, cmd] {
    if (o->file.empty() && cmd->count("--random") == 0)
      throw CLI::ValidationError("parens", "give FILE or --random N");
    Execution ex = o->execution.resolve();
    OverwriteVector<uint8_t> input;
    if (!o->file.empty()) {
      input = readBytes(o->file);
    } else {
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

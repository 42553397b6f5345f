// libFuzzer target for the `procgen noise` option parser
// (tools/procgen/noise_options.cpp): the input, split at whitespace, is the
// command line after `procgen noise`. It must either be refused — a CLI11
// parse error or procgen::Error — or resolve into a job the library accepts
// (validateNoise passes and the grid's byte count did not overflow). Any other
// exception, crash, sanitizer report or hang is a bug. Nothing is generated.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "noise_options.hpp"
#include "procgen/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> tokens;
  std::string token;
  for (size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == ' ' || c == '\n' || c == '\t' || c == '\0') {
      if (!token.empty()) tokens.push_back(token);
      token.clear();
    } else {
      token += c;
    }
  }
  if (!token.empty()) tokens.push_back(token);
  std::vector<std::string> reversed(tokens.rbegin(), tokens.rend());  // CLI11 takes them last first
  CLI::App app{"fuzz"};
  procgen::cli::NoiseArgs args;
  procgen::cli::addNoiseOptions(app, args);
  try {
    app.parse(reversed);
  } catch (const CLI::Error&) {
    return 0;
  }
  try {
    const procgen::cli::NoiseJob job = procgen::cli::resolveNoiseArgs(args);
    procgen::validateNoise(job.params, job.at ? nullptr : &job.grid);
    if (job.grid_bytes != job.grid.points() * sizeof(float)) std::abort();
  } catch (const procgen::Error&) {
    return 0;
  }
  return 0;
}

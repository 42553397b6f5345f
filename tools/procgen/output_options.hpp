// The outputs every subcommand shares: `-o PATH` (repeatable; what a path
// holds is chosen by its extension where the command has several kinds), `-`
// for standard output, and `--stats-json PATH|-` (statistics as one JSON
// object, json_output.hpp). Every output goes through writeOutput/openOutput,
// so "-" and I/O errors (exit code 4) behave the same in every command.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "json_output.hpp"
#include "procgen/output.hpp"

namespace procgen::cli {

/// A sink on `path`, or on standard output when path is "-". Throws OutputError.
std::unique_ptr<ByteSink> openOutput(const std::string& path);

/// Writes `bytes` to `path`, or to stdout when path is "-". Throws OutputError.
void writeOutput(const std::string& path, std::string_view bytes);

/// The lower-case extension of `path` with its dot ("" when none).
std::string extensionOf(const std::string& path);

/// -o and --stats-json of one command.
struct CommandOutputs {
  std::vector<std::string> paths;  ///< -o, in command-line order
  std::string stats_json;          ///< --stats-json (empty: not requested)

  /// Adds `-o,--output` (`names` may change the spelling), repeatable;
  /// `default_path` non-empty: used when no -o is given (e.g. "-").
  CLI::Option* addOutputs(CLI::App& cmd, const std::string& help, const std::string& default_path = "",
                          const std::string& names = "-o,--output");
  /// Adds the statistics option (`name` e.g. "--stats-json" or "--json").
  CLI::Option* addStatsJson(CLI::App& cmd, const std::string& help, const std::string& name = "--stats-json");

  /// Writes `bytes` to every -o path.
  void writeAll(std::string_view bytes) const;
  /// Writes formatJson(stats) to --stats-json; nothing when it was not given.
  void writeStats(const Json& stats) const;
};

}  // namespace procgen::cli

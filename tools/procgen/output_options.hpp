// The outputs every subcommand shares: `-o PATH` (repeatable; what a path
// holds is chosen by its extension where the command has several kinds), `-`
// for standard output, and `--stats-json PATH|-` (statistics as one JSON
// object, json_output.hpp). Every output goes through writeOutput/openOutput,
// so "-" and I/O errors (exit code 4) behave the same in every command.
//
// Hostile-input guarantees (issue 16, docs/reliability.md), which a new
// command gets by using CommandOutputs:
//  - Atomic: files are written under a temporary name and renamed when
//    complete (FileSink), and main.cpp runs every command inside one
//    OutputTransaction, so when any output or the run fails, none of the
//    run's files is left (an earlier file of the same name keeps its
//    contents). Standard output streams as it is written.
//  - No clashes: once the command line is parsed, before the command runs,
//    CommandOutputs refuses (exit 1) one file named twice — through two
//    options, or as another output's companion (`x.obj` writes `x.mtl`) —
//    and two outputs on standard output. Outputs beside -o and --stats-json
//    are declared with addOutputOption; companions with `files_of`.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "json_output.hpp"
#include "procgen/io.hpp"
#include "procgen/output.hpp"

namespace procgen::cli {

/// A sink on `path`, or on standard output when path is "-". Throws OutputError.
std::unique_ptr<ByteSink> openOutput(const std::string& path);

/// Writes `bytes` to `path`, or to stdout when path is "-". Throws OutputError.
void writeOutput(const std::string& path, std::string_view bytes);

/// The lower-case extension of `path` with its dot ("" when none).
std::string extensionOf(const std::string& path);

/// One output a run will write: its path ("-" = standard output) and how the
/// command line named it (e.g. "-o x.obj", "x.mtl beside -o x.obj"), for messages.
struct PlannedOutput {
  std::string path;
  std::string named_by;
};

/// Throws Error(ExitCode::kUsage) when two outputs are the same file (paths
/// compared after resolving ".", ".." and symlinks) or two write to standard output.
void requireDistinctOutputs(const std::vector<PlannedOutput>& outputs);

/// --projection NAME and --image-size W,H of a command's image outputs into
/// `write` (an empty image_size keeps write's size). Throws Error (kUsage)
/// for an unknown projection or a size outside 16..16384.
void applyImageOptions(const std::string& projection, const std::vector<int>& image_size, WriteOptions& write);

/// -o and --stats-json of one command.
struct CommandOutputs {
  std::vector<std::string> paths;  ///< -o, in command-line order
  std::string stats_json;          ///< --stats-json (empty: not requested)

  /// The files one -o path writes when it writes more than itself (a
  /// geometry writer's geometryFiles, a volume's volumeFiles); unset: the path alone.
  std::function<std::vector<std::filesystem::path>(const std::string& path)> files_of;

  /// Adds `-o,--output` (`names` may change the spelling), repeatable;
  /// `default_path` non-empty: used when no -o is given (e.g. "-").
  CLI::Option* addOutputs(CLI::App& cmd, const std::string& help, const std::string& default_path = "",
                          const std::string& names = "-o,--output");
  /// Adds the statistics option (`name` e.g. "--stats-json" or "--json").
  CLI::Option* addStatsJson(CLI::App& cmd, const std::string& help, const std::string& name = "--stats-json");
  /// Adds another output option of the command (e.g. bbox --write-tree) so
  /// that it takes part in the clash check.
  CLI::Option* addOutputOption(CLI::App& cmd, const std::string& names, std::string& path, const std::string& help);

  /// Every output the parsed command line asks for, companions included.
  std::vector<PlannedOutput> planned() const;

  /// Writes `bytes` to every -o path.
  void writeAll(std::string_view bytes) const;
  /// Writes formatJson(stats) to --stats-json; nothing when it was not given.
  void writeStats(const Json& stats) const;

 private:
  /// Registers the clash check to run when `cmd`'s command line is parsed.
  void checkWhenParsed(CLI::App& cmd);
  std::string output_name_ = "-o", stats_name_ = "--stats-json";
  std::vector<std::pair<std::string, const std::string*>> other_outputs_;  ///< option name, its path
  bool check_registered_ = false;
};

}  // namespace procgen::cli

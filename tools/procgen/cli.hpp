// The procgen CLI: a thin layer over the library. Each subcommand lives in its
// own cmd_<name>.cpp and registers itself with PROCGEN_REGISTER_COMMAND, so
// adding a command never touches main.cpp.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "procgen/backend.hpp"
#include "procgen/error.hpp"

namespace procgen::cli {

/// A subcommand's setup: add it to `app` and set its callback. The callback
/// returns normally on success and throws procgen::Error (or CLI11 errors) on failure.
using CommandSetup = std::function<void(CLI::App& app)>;

/// Order is the order commands appear in `procgen --help`.
bool registerCommand(int order, CommandSetup setup);
const std::vector<std::pair<int, CommandSetup>>& registeredCommands();

/// Options every backend-aware command shares: --backend, --threads and --device.
struct ExecutionOptions {
  std::string backend = "serial";
  int threads = 0;
  int device = -1;  ///< --device N (opencl); -1 = PROCGEN_OPENCL_DEVICE or a GPU first
  void add(CLI::App& cmd, const std::string& default_backend = "serial");
  /// Validates and converts; throws BackendUnavailableError if not compiled in.
  Execution resolve() const;
};

/// True when stderr is a terminal (progress lines are shown only then).
bool stderrIsTerminal();

// ---------------------------------------------------------------------------
// Strict integer options (issue 16). CLI11 alone reads integers with strtoll
// in base 0: "-1" becomes 2^64-1 for an unsigned option, 23 digits saturate,
// "010" is octal, and its range messages print a 309-digit bound. Every
// integer option of every command is added through addInteger instead:
//   addInteger(*cmd, "--seed", args->seed, "Seed of the stream");       // uint64_t: 0..2^64-1
//   addInteger(*cmd, "--threads", threads, "Worker threads", 0);        // int, at least 0
//   addInteger(*cmd, "--sides", sides, "Sides", 3, 64);                 // int in [3, 64]
// The value may be an integer, a std::optional of one or a std::vector of
// them (each element checked). Accepted: decimal digits, a leading '-' only
// when the range allows negatives; leading zeros are decimal. Anything else
// is a usage error (exit 1) with a short message, e.g.
//   --seed: '-1' is not a non-negative integer
//   --random: 99999999999999999999999 is out of range (at most 18446744073709551615)
// ---------------------------------------------------------------------------

namespace detail {
template <typename T>
struct IntegerOf {
  using type = T;
};
template <typename T>
struct IntegerOf<std::optional<T>> {
  using type = T;
};
template <typename T>
struct IntegerOf<std::vector<T>> {
  using type = T;
};
}  // namespace detail

/// The element type of an integer option's value (T, std::optional<T>, std::vector<T>).
template <typename Value>
using IntegerOf = typename detail::IntegerOf<Value>::type;

/// A CLI11 transform that accepts decimal integers in [min, max] and rewrites
/// them in the plain form CLI11 converts exactly (no leading zeros, no "-0").
/// The bounds are given as 64-bit values of either sign.
CLI::Validator integerRange(bool min_negative, uint64_t min_magnitude, bool max_negative, uint64_t max_magnitude);

/// Adds option `names` reading `value` strictly (above), within [min, max].
template <typename Value, typename Int = IntegerOf<Value>>
CLI::Option* addInteger(CLI::App& cmd, const std::string& names, Value& value, const std::string& help,
                        std::type_identity_t<Int> min = std::numeric_limits<Int>::min(),
                        std::type_identity_t<Int> max = std::numeric_limits<Int>::max()) {
  static_assert(std::is_integral_v<Int> && !std::is_same_v<Int, bool>, "addInteger takes integer options");
  const auto negative = [](Int v) {
    if constexpr (std::is_signed_v<Int>) return v < 0;
    else return false;
  };
  const auto magnitude = [&](Int v) {
    return negative(v) ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  };
  return cmd.add_option(names, value, help)
      ->transform(integerRange(negative(min), magnitude(min), negative(max), magnitude(max)));
}

}  // namespace procgen::cli

#define PROCGEN_CLI_CONCAT2(a, b) a##b
#define PROCGEN_CLI_CONCAT(a, b) PROCGEN_CLI_CONCAT2(a, b)
#define PROCGEN_REGISTER_COMMAND(order, fn)                                  \
  static const bool PROCGEN_CLI_CONCAT(procgen_registered_, __LINE__) =      \
      ::procgen::cli::registerCommand(order, fn)

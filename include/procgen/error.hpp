// procgen error types: the three tiers of STYLE.md practice 11.
//  - programmer misuse: assertions (PROCGEN_ASSERT, kept on in test builds);
//  - untrusted text (grammars, scenes, arguments): ParseError with file:line:col;
//  - runtime failures (memory budget, I/O, missing backend): the exceptions below.
// The library never calls exit(); the CLI maps each type to its exit code.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace procgen {

/// Process exit codes used by the `procgen` tool (the CLI contract).
enum class ExitCode : int {
  kOk = 0,
  kUsage = 1,               ///< bad command line
  kBadInput = 2,            ///< malformed input file, or a run that would exceed its budget
  kBackendUnavailable = 3,  ///< requested backend not built or no device
  kOutputError = 4,         ///< an output file could not be written
};

/// Base of every procgen exception; `exitCode()` is what the CLI returns for it.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ExitCode code = ExitCode::kBadInput)
      : std::runtime_error(message), code_(code) {}
  ExitCode exitCode() const noexcept { return code_; }

 private:
  ExitCode code_;
};

/// Position in a text input; line and column are 1-based, column counts bytes.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

/// `text` made safe for a one-line message (issue 16): control bytes and
/// bytes that are not valid UTF-8 are escaped (\t, \n, \r, \xNN), and when
/// the result is longer than `max_bytes` its middle is replaced by
/// "...[N bytes]...", keeping the head and the tail (so the explanation after
/// a huge quoted token survives). A 10 MB token or binary garbage from an
/// input gives a short readable message; printable text is unchanged.
std::string printableText(std::string_view text, size_t max_bytes = 240);

/// Malformed untrusted text. `what()` is the full compiler-style diagnostic:
///   file:line:col: error: message
///       offending line
///       ^
/// The message and the file name go through printableText; the offending
/// line is escaped the same way and, when long, shown as a window of about
/// 100 bytes around the column (with "..." where it was cut), the caret
/// still under the offending byte.
class ParseError : public Error {
 public:
  ParseError(SourceLocation location, std::string message, std::string source_line);
  const SourceLocation& location() const noexcept { return location_; }
  const std::string& message() const noexcept { return message_; }

 private:
  SourceLocation location_;
  std::string message_;
};

/// A computation stopped before allocating because it would exceed its budget.
class ResourceError : public Error {
 public:
  explicit ResourceError(const std::string& message) : Error(message, ExitCode::kBadInput) {}
};

/// An output could not be written (path, permissions, disk full).
class OutputError : public Error {
 public:
  explicit OutputError(const std::string& message) : Error(message, ExitCode::kOutputError) {}
};

/// The requested backend is not compiled in, or has no device.
class BackendUnavailableError : public Error {
 public:
  explicit BackendUnavailableError(const std::string& message)
      : Error(message, ExitCode::kBackendUnavailable) {}
};

}  // namespace procgen

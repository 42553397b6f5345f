#include "procgen/error.hpp"

#include <sstream>

namespace procgen {
namespace {

std::string formatDiagnostic(const SourceLocation& loc, const std::string& message,
                             const std::string& source_line) {
  std::ostringstream out;
  out << (loc.file.empty() ? "<input>" : loc.file) << ':' << loc.line << ':' << loc.column
      << ": error: " << message;
  if (!source_line.empty()) {
    out << "\n    " << source_line << "\n    ";
    // Reproduce tabs so the caret lines up under the offending byte.
    for (int i = 1; i < loc.column && i - 1 < static_cast<int>(source_line.size()); ++i)
      out << (source_line[i - 1] == '\t' ? '\t' : ' ');
    out << '^';
  }
  return out.str();
}

}  // namespace

ParseError::ParseError(SourceLocation location, std::string message, std::string source_line)
    : Error(formatDiagnostic(location, message, source_line), ExitCode::kBadInput),
      location_(std::move(location)),
      message_(std::move(message)) {}

}  // namespace procgen

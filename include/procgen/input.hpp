// procgen inputs: the one way every reader gets a file's bytes (L-systems,
// scenes and the models they list, box trees, parentheses, view files, and
// the readers to come), so none of them hangs on a device or exhausts memory
// on a huge input (issue 16).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace procgen {

/// The whole contents of the input file `path`. `what` names the input in
/// messages ("L-system file", "scene"). Refused with Error (ExitCode::kBadInput):
///  - a path that does not exist or cannot be read;
///  - a directory, a character or block device (/dev/zero, a terminal) or a
///    socket — reading them would give nothing useful or never end;
///  - a file larger than the memory budget (`budget_bytes`, 0 = defaultMemoryBudget(),
///    procgen/budget.hpp): ResourceError before reading, for pipes as the
///    bytes arrive.
/// Regular files and pipes (`<(cmd)`, a piped /dev/stdin) are read.
/// Thread safety: safe to call concurrently. Complexity: linear in the size.
std::string readInputFile(const std::filesystem::path& path, std::string_view what,
                          uint64_t budget_bytes = 0);

}  // namespace procgen

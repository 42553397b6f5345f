#include "output_options.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "procgen/error.hpp"

namespace procgen::cli {
namespace {

class StdoutSink final : public ByteSink {
 public:
  void write(const void* data, size_t size) override {
    if (size != 0 && std::fwrite(data, 1, size, stdout) != size) fail();
  }
  void finish() override {
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) fail();
  }
  std::string name() const override { return "standard output"; }

 private:
  [[noreturn]] static void fail() {
    throw OutputError(std::string("cannot write to standard output: ") + std::strerror(errno));
  }
};

}  // namespace

std::unique_ptr<ByteSink> openOutput(const std::string& path) {
  if (path == "-") return std::make_unique<StdoutSink>();
  return std::make_unique<FileSink>(path);
}

void writeOutput(const std::string& path, std::string_view bytes) {
  std::unique_ptr<ByteSink> sink = openOutput(path);
  sink->write(bytes.data(), bytes.size());
  sink->finish();
}

std::string extensionOf(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

namespace {

/// The name one file has however it was spelled ("./x", "d/../x", a symlink).
std::string sameFileKey(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal().string() : canonical.string();
}

/// The first word of CLI11's "-o,--output" spelling, for messages.
std::string firstName(const std::string& names) { return names.substr(0, names.find(',')); }

}  // namespace

void requireDistinctOutputs(const std::vector<PlannedOutput>& outputs) {
  std::vector<std::pair<std::string, const PlannedOutput*>> seen;
  for (const PlannedOutput& out : outputs) {
    const std::string key = out.path == "-" ? "-" : sameFileKey(out.path);
    for (const auto& [other_key, other] : seen) {
      if (other_key != key) continue;
      if (key == "-")
        throw Error("output clash: " + other->named_by + " and " + out.named_by +
                        " both write to standard output; send one of them to a file",
                    ExitCode::kUsage);
      throw Error("output clash: " + out.named_by + " is the same file as " + other->named_by +
                      "; one would replace the other, give each output its own path",
                  ExitCode::kUsage);
    }
    seen.emplace_back(key, &out);
  }
}

CLI::Option* CommandOutputs::addOutputs(CLI::App& cmd, const std::string& help,
                                        const std::string& default_path, const std::string& names) {
  CLI::Option* option = cmd.add_option(names, paths, help)->group("Output");
  if (!default_path.empty()) {
    paths = {default_path};
    option->capture_default_str();
  }
  output_name_ = firstName(names);
  checkWhenParsed(cmd);
  return option;
}

CLI::Option* CommandOutputs::addStatsJson(CLI::App& cmd, const std::string& help, const std::string& name) {
  stats_name_ = name;
  checkWhenParsed(cmd);
  return cmd.add_option(name, stats_json, help)->group("Output");
}

CLI::Option* CommandOutputs::addOutputOption(CLI::App& cmd, const std::string& names, std::string& path,
                                             const std::string& help) {
  other_outputs_.emplace_back(firstName(names), &path);
  checkWhenParsed(cmd);
  return cmd.add_option(names, path, help)->group("Output");
}

std::vector<PlannedOutput> CommandOutputs::planned() const {
  std::vector<PlannedOutput> out;
  for (const std::string& path : paths) {
    const std::string named_by = output_name_ + " " + path;
    out.push_back({path, named_by});
    if (path == "-" || !files_of) continue;
    const std::vector<std::filesystem::path> files = files_of(path);
    for (size_t k = 1; k < files.size(); ++k)  // files[0] is the path itself
      out.push_back({files[k].string(), files[k].string() + " (written beside " + named_by + ")"});
  }
  if (!stats_json.empty()) out.push_back({stats_json, stats_name_ + " " + stats_json});
  for (const auto& [name, path] : other_outputs_)
    if (!path->empty()) out.push_back({*path, name + " " + *path});
  return out;
}

void CommandOutputs::checkWhenParsed(CLI::App& cmd) {
  if (check_registered_) return;
  check_registered_ = true;
  // Runs once the command's own options are parsed, before its callback:
  // a clash fails at once, not after a long run.
  cmd.parse_complete_callback([this] { requireDistinctOutputs(planned()); });
}

void applyImageOptions(const std::string& projection, const std::vector<int>& image_size, WriteOptions& write) {
  const std::optional<Projection> view = parseProjection(projection);
  if (!view) throw Error("unknown --projection '" + projection + "' (front, side, top, iso)", ExitCode::kUsage);
  write.projection = *view;
  if (image_size.empty()) return;
  if (image_size.size() != 2 || image_size[0] < 16 || image_size[1] < 16 || image_size[0] > 16384 ||
      image_size[1] > 16384)
    throw Error("--image-size must be W,H in 16..16384", ExitCode::kUsage);
  write.width = image_size[0];
  write.height = image_size[1];
}

void CommandOutputs::writeAll(std::string_view bytes) const {
  for (const std::string& path : paths) writeOutput(path, bytes);
}

void CommandOutputs::writeStats(const Json& stats) const {
  if (!stats_json.empty()) writeOutput(stats_json, formatJson(stats));
}

}  // namespace procgen::cli

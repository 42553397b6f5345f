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

CLI::Option* CommandOutputs::addOutputs(CLI::App& cmd, const std::string& help,
                                        const std::string& default_path, const std::string& names) {
  CLI::Option* option = cmd.add_option(names, paths, help)->group("Output");
  if (!default_path.empty()) {
    paths = {default_path};
    option->capture_default_str();
  }
  return option;
}

CLI::Option* CommandOutputs::addStatsJson(CLI::App& cmd, const std::string& help, const std::string& name) {
  return cmd.add_option(name, stats_json, help)->group("Output");
}

void CommandOutputs::writeAll(std::string_view bytes) const {
  for (const std::string& path : paths) writeOutput(path, bytes);
}

void CommandOutputs::writeStats(const Json& stats) const {
  if (!stats_json.empty()) writeOutput(stats_json, formatJson(stats));
}

}  // namespace procgen::cli

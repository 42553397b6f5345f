// The studio's lookups: what this server can do (/api/info) and the examples
// embedded at build time (/api/examples, /api/examples/<path>).
#include <algorithm>
#include <thread>

#include "procgen/backend.hpp"
#include "procgen/opencl.hpp"
#include "studio/api.hpp"

namespace procgen::studio {

namespace {

/// "lsystem" for examples/lsystems/*.l, "flame" for examples/flames/*.flam3, …
std::string exampleKind(std::string_view path) {
  if (path.starts_with("examples/lsystems/")) return "lsystem";
  if (path.starts_with("examples/flames/")) return "flame";
  if (path.starts_with("examples/points/")) return "points";
  return "other";
}

std::string stem(std::string_view path) {
  auto slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return std::string(name.substr(0, name.find('.')));
}

/// The first line of a leading /* … */ or <!-- … --> comment, for the example list.
std::string title(std::string_view text) {
  size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return {};
  text.remove_prefix(start);
  if (text.starts_with("/*")) text.remove_prefix(2);
  else if (text.starts_with("<!--")) text.remove_prefix(4);
  else return {};
  text = text.substr(0, text.find_first_of("\r\n"));
  while (!text.empty() && (text.front() == ' ' || text.front() == '*')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '/' || text.back() == '*')) text.remove_suffix(1);
  return std::string(text.substr(0, 120));
}

}  // namespace

void registerInfoEndpoints(Api& api) {
  api.lookup("/api/info", [&api](const Request&, Job&) {
    const StudioOptions& o = api.options();
    json backends = json::object();
    for (Backend b : {Backend::kSerial, Backend::kCpu, Backend::kOpenCL})
      backends[std::string(backendName(b))] = backendAvailable(b);
    return Reply::ofJson({{"name", "procgen studio"},
                          {"version", "0.1.0"},
                          {"backends", backends},
                          {"hardware_threads", std::max(1u, std::thread::hardware_concurrency())},
                          {"page", studioPageAvailable()},
                          {"limits",
                           {{"max_jobs", o.max_jobs},
                            {"max_body_bytes", o.max_body_bytes},
                            {"time_limit_seconds", o.time_limit_seconds}}}});
  });
  api.lookup("/api/examples", [](const Request&, Job&) {
    json list = json::array();
    for (const Asset* asset : assetsUnder("examples/")) {
      list.push_back({{"path", asset->path},
                      {"name", stem(asset->path)},
                      {"kind", exampleKind(asset->path)},
                      {"title", title(asset->bytes())},
                      {"bytes", asset->bytes().size()}});
    }
    return Reply::ofJson(list);
  });
  api.lookup(R"(/api/examples/(.+))", [](const Request& request, Job&) {
    std::string path = "examples/" + request.path_params.at(0);
    const Asset* asset = findAsset(path);
    if (!asset) return Reply::ofJson({{"error", {{"kind", "not_found"}, {"message", "no example " + printableText(path, 120)}}}}, 404);
    return Reply::ofBytes("text/plain; charset=utf-8", std::string(asset->bytes()));
  });
}

}  // namespace procgen::studio

// libFuzzer target: request bodies against every studio endpoint (issue 20,
// "fuzz its endpoints with malformed JSON and oversized bodies"). The first
// byte picks the endpoint (in path order), the rest is the body. Handlers run
// in-process through the same Api interface the HTTP server uses, with a short
// time limit and a small memory budget; every exception must map to a reply
// (errorReply) — a crash, a leak, a sanitizer report or a hang is a finding.
//
// Bodies holding numbers beyond ±1000 are skipped: range checks for large
// values are unit-tested (tests/studio/*_api_test.cpp), and in-range but
// large requests (a 2048² noise field under ASan) would only measure speed.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "studio/api.hpp"

namespace {

using namespace procgen::studio;

struct Endpoint {
  std::string path;
  enum Kind { kCompute, kStream, kUpload, kLookup } kind;
  Handler handler;
  StreamHandler stream;
};

class CollectingApi final : public Api {
 public:
  CollectingApi() {
    options_.quiet = true;
    options_.max_jobs = 1;
    options_.time_limit_seconds = 1;
  }
  void compute(std::string path, std::string, Handler h) override { add({path, Endpoint::kCompute, h, {}}); }
  void stream(std::string path, std::string, StreamHandler h) override { add({path, Endpoint::kStream, {}, h}); }
  void upload(std::string path, std::string, Handler h) override { add({path, Endpoint::kUpload, h, {}}); }
  void lookup(std::string path, Handler h) override {
    if (path.find('(') == std::string::npos) add({path, Endpoint::kLookup, h, {}});  // patterns need captures
  }
  const procgen::StudioOptions& options() const override { return options_; }
  std::vector<Endpoint> endpoints;

 private:
  void add(Endpoint e) {
    endpoints.push_back(std::move(e));
    std::sort(endpoints.begin(), endpoints.end(), [](const Endpoint& a, const Endpoint& b) { return a.path < b.path; });
  }
  procgen::StudioOptions options_;
};

class DiscardStream final : public FrameStream {
 public:
  explicit DiscardStream(const Job& job) : job_(job) {}
  void send(const Frame& frame) override {
    job_.check();
    volatile size_t n = frame.encode().size();
    (void)n;
  }

 private:
  const Job& job_;
};

bool holdsLargeNumber(const json& value) {
  if (value.is_number()) return !(value.get<double>() >= -1000 && value.get<double>() <= 1000);
  if (value.is_structured())
    for (const auto& v : value) if (holdsLargeNumber(v)) return true;
  return false;
}

CollectingApi& api() {
  static CollectingApi* instance = [] {
    auto* a = new CollectingApi;
    registerAllEndpoints(*a);
    return a;
  }();
  return *instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || api().endpoints.empty()) return 0;
  const Endpoint& endpoint = api().endpoints[data[0] % api().endpoints.size()];
  Request request;
  request.body.assign(reinterpret_cast<const char*>(data + 1), size - 1);
  auto job = Job(std::make_shared<std::atomic<bool>>(false), std::chrono::steady_clock::now() + std::chrono::seconds(1),
                 1, 128ull << 20, 1);
  try {
    if (endpoint.kind == Endpoint::kUpload || endpoint.kind == Endpoint::kLookup) {
      request.params = Params();  // uploads: the body is a file; parameters default
    } else {
      request.params = Params::parse(request.body);
      if (holdsLargeNumber(request.params.raw())) return 0;
      // The opencl backend compiles its kernels on first use (seconds under
      // ASan, past -timeout); the request checks are the same on every backend.
      if (request.body.find("opencl") != std::string::npos) return 0;
    }
    if (endpoint.kind == Endpoint::kStream) {
      DiscardStream stream(job);
      endpoint.stream(request, job)(stream);
    } else {
      Reply reply = endpoint.handler(request, job);
      if (reply.status == 200 && reply.body.empty() && reply.content_type == "application/json") __builtin_trap();
    }
  } catch (const std::exception& e) {
    Reply reply = errorReply(e);
    if (reply.status == 500 && json::parse(reply.body)["error"]["kind"] == "internal") __builtin_trap();  // an unexpected exception type
  }
  return 0;
}

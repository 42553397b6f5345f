// procgen studio's HTTP server (issue 20): cpp-httplib (Debian libcpp-httplib-dev)
// serving the embedded page and the /api/ endpoints of src/studio/api_*.cpp.
//
// Limits (docs/studio.md "Limits"): request bodies over max_body_bytes get
// 413 (httplib's payload limit); at most max_jobs computations run at once —
// a request waits up to a second for a slot (a superseded job is usually
// unwinding), then gets 429; every job has a deadline and a share of the
// memory budget; a request carrying X-Procgen-Client cancels the job in
// flight on the same channel. No exception reaches httplib: every handler's
// errors become JSON replies (errorReply).
#include <httplib.h>

#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "procgen/budget.hpp"
#include "procgen/studio.hpp"
#include "studio/api.hpp"

namespace procgen {

namespace studio {
namespace {

using Clock = std::chrono::steady_clock;

std::string contentTypeOf(std::string_view path) {
  auto ends = [&](std::string_view suffix) {
    return path.size() >= suffix.size() && path.substr(path.size() - suffix.size()) == suffix;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".png")) return "image/png";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".json")) return "application/json";
  return "text/plain; charset=utf-8";
}

/// By value: a handler's reply is moved in, and its body (tens of MB for a
/// big model) moved on into the response rather than copied by set_content.
void send(httplib::Response& res, Reply reply) {
  res.status = reply.status;
  res.set_header("Cache-Control", "no-store");
  if (!reply.filename.empty())
    res.set_header("Content-Disposition", "attachment; filename=\"" + reply.filename + "\"");
  res.set_content(std::string(), reply.content_type.c_str());
  res.body = std::move(reply.body);
}

/// A streaming handler's view of httplib's chunk sink.
class SinkStream final : public FrameStream {
 public:
  SinkStream(httplib::DataSink& sink, const Job& job) : sink_(sink), job_(job) {}
  void send(const Frame& frame) override {
    job_.check();
    // The frame's own bytes, a chunk at a time: httplib copies each chunk
    // twice into fresh strings, which for a frame of MBs means fresh pages
    // (a page fault per 4 KiB) and tens of MB copied; chunks of 256 KiB
    // reuse the heap's memory.
    constexpr size_t kChunk = size_t{1} << 18;
    write(frame.encodeHead());
    const std::string_view body = frame.body();
    for (size_t at = 0; at < body.size(); at += kChunk) write(body.substr(at, kChunk));
  }

 private:
  void write(std::string_view bytes) {
    if (!sink_.is_writable() || !sink_.write(bytes.data(), bytes.size())) throw Cancelled();
  }
  httplib::DataSink& sink_;
  const Job& job_;
};

}  // namespace

/// Bounds the computations running at once; a slot is held by a Job.
class JobSlots {
 public:
  explicit JobSlots(int slots) : free_(slots) {}
  /// Waits up to `patience` for a slot; throws Busy.
  void acquire(Clock::duration patience) {
    std::unique_lock lock(mutex_);
    if (!freed_.wait_for(lock, patience, [this] { return free_ > 0; }))
      throw Busy("the server is busy: every job slot is taken (procgen serve --max-jobs); try again");
    --free_;
  }
  void release() {
    {
      std::lock_guard lock(mutex_);
      ++free_;
    }
    freed_.notify_one();
  }

 private:
  std::mutex mutex_;
  std::condition_variable freed_;
  int free_;
};

/// The job in flight on each channel ("client channel"): a newer request
/// sets the older one's flag. Newer: a higher X-Procgen-Seq (the page numbers
/// its requests; two sent a few ms apart may arrive in either order), or, at
/// the same number (none sent), the later arrival. A request older than the
/// one in flight comes back cancelled at once.
class Channels {
 public:
  using Flag = std::shared_ptr<std::atomic<bool>>;
  Flag open(const std::string& key, uint64_t seq) {
    auto flag = std::make_shared<std::atomic<bool>>(false);
    if (key.empty()) return flag;
    std::lock_guard lock(mutex_);
    Current& current = current_[key];
    if (current.flag && seq < current.seq) {
      flag->store(true);  // superseded before it started
      return flag;
    }
    if (current.flag) current.flag->store(true);
    current = {flag, seq};
    return flag;
  }
  void close(const std::string& key, const Flag& flag) {
    if (key.empty()) return;
    std::lock_guard lock(mutex_);
    auto it = current_.find(key);
    if (it != current_.end() && it->second.flag == flag) current_.erase(it);
  }

 private:
  struct Current {
    Flag flag;
    uint64_t seq = 0;
  };
  std::mutex mutex_;
  std::map<std::string, Current> current_;
};

/// A job's resources, released when the last holder (handler or stream) ends.
struct RunningJob {
  RunningJob(JobSlots& slots, Channels& channels, std::string key, Channels::Flag flag, Job job)
      : slots(slots), channels(channels), key(std::move(key)), flag(std::move(flag)), job(std::move(job)) {}
  ~RunningJob() {
    channels.close(key, flag);
    slots.release();
  }
  JobSlots& slots;
  Channels& channels;
  std::string key;
  Channels::Flag flag;
  Job job;
  Request request;
};

}  // namespace studio

using namespace studio;

struct StudioServer::Impl final : Api {
  explicit Impl(StudioOptions opts)
      : options_(std::move(opts)), slots_(std::max(1, options_.max_jobs)) {
    memory_budget_ = options_.memory_budget ? options_.memory_budget
                                            : defaultMemoryBudget() / static_cast<uint64_t>(std::max(1, options_.max_jobs));
  }

  const StudioOptions& options() const override { return options_; }

  /// A request with the other method on a path gets 405 and the method the
  /// path takes (Allow), not a 404 that says the path does not exist.
  void allowOnly(const std::string& path, const char* allowed) {
    auto refuse = [allowed](const httplib::Request& req, httplib::Response& res) {
      send(res, Reply::ofJson({{"error",
                                {{"kind", "method"},
                                 {"message", req.method + " is not allowed here; " + printableText(req.path, 120) +
                                                 " takes " + allowed}}}},
                              405));
      res.set_header("Allow", allowed);
    };
    if (std::string_view(allowed) == "GET") http_.Post(path, refuse);
    else http_.Get(path, refuse);
  }

  void compute(std::string path, std::string channel, Handler handler) override {
    allowOnly(path, "POST");
    http_.Post(path, [this, channel, handler](const httplib::Request& req, httplib::Response& res) {
      try {
        auto job = startJob(req, channel);
        send(res, handler(job->request, job->job));
      } catch (const std::exception& e) {
        send(res, errorReply(e));
      }
    });
  }

  void upload(std::string path, std::string channel, Handler handler) override {
    allowOnly(path, "POST");
    http_.Post(path, [this, channel, handler](const httplib::Request& req, httplib::Response& res) {
      try {
        auto job = startJob(req, channel, /*body_is_json=*/false);
        send(res, handler(job->request, job->job));
      } catch (const std::exception& e) {
        send(res, errorReply(e));
      }
    });
  }

  void stream(std::string path, std::string channel, StreamHandler handler) override {
    allowOnly(path, "POST");
    http_.Post(path, [this, channel, handler](const httplib::Request& req, httplib::Response& res) {
      std::shared_ptr<RunningJob> job;
      FrameProducer producer;
      try {
        job = startJob(req, channel);  // errors before the first frame are plain replies
        producer = handler(job->request, job->job);
      } catch (const std::exception& e) {
        send(res, errorReply(e));
        return;
      }
      res.set_header("Cache-Control", "no-store");
      res.set_chunked_content_provider(
          "application/octet-stream", [job, producer](size_t, httplib::DataSink& sink) {
            SinkStream stream(sink, job->job);
            try {
              producer(stream);
            } catch (const Cancelled&) {
              // The client went away or moved on: nobody reads an error frame.
            } catch (const std::exception& e) {
              Reply reply = errorReply(e);
              Frame frame;
              frame.header = json::parse(reply.body);
              frame.header["status"] = reply.status;
              std::string bytes = frame.encode();
              if (sink.is_writable()) sink.write(bytes.data(), bytes.size());
            }
            sink.done();
            return true;
          });
    });
  }

  void lookup(std::string path, Handler handler) override {
    allowOnly(path, "GET");
    http_.Get(path, [this, handler](const httplib::Request& req, httplib::Response& res) {
      try {
        Request request;
        request.params = queryParams(req);
        for (size_t i = 1; i < req.matches.size(); ++i) request.path_params.push_back(req.matches[i]);
        Job job(std::make_shared<std::atomic<bool>>(false), Clock::now() + std::chrono::hours(24 * 365),
                options_.time_limit_seconds, memory_budget_, options_.threads);
        send(res, handler(request, job));
      } catch (const std::exception& e) {
        send(res, errorReply(e));
      }
    });
  }

  static Params queryParams(const httplib::Request& req) {
    json query = json::object();
    for (const auto& [key, value] : req.params) query[key] = value;
    return Params(std::move(query));
  }

  std::shared_ptr<RunningJob> startJob(const httplib::Request& req, const std::string& channel,
                                       bool body_is_json = true) {
    checkOrigin(req);
    Request request;
    request.params = body_is_json ? Params::parse(req.body) : queryParams(req);
    request.body = req.body;
    for (size_t i = 1; i < req.matches.size(); ++i) request.path_params.push_back(req.matches[i]);
    std::string client = req.get_header_value("X-Procgen-Client");
    std::string key = client.empty() ? std::string() : client.substr(0, 128) + " " + channel;
    request.client = client.substr(0, 128);
    // Cancel the stale job first, so its slot frees while this one waits.
    uint64_t seq = 0;
    const std::string seq_text = req.get_header_value("X-Procgen-Seq");
    std::from_chars(seq_text.data(), seq_text.data() + seq_text.size(), seq);  // not a number: 0
    Channels::Flag flag = channels_.open(key, seq);
    if (flag->load()) throw Cancelled();  // a newer request of the channel came first
    try {
      slots_.acquire(std::chrono::seconds(1));
    } catch (...) {
      channels_.close(key, flag);
      throw;
    }
    auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(options_.time_limit_seconds));
    auto job = std::make_shared<RunningJob>(slots_, channels_, key, flag,
                                            Job(flag, deadline, options_.time_limit_seconds, memory_budget_,
                                                options_.threads));
    job->request = std::move(request);
    return job;
  }

  /// A page on another origin may send simple POSTs to a localhost server
  /// (it cannot read the replies, but it could make the server work): refuse
  /// requests whose Origin names another host than the one they were sent to.
  static void checkOrigin(const httplib::Request& req) {
    std::string origin = req.get_header_value("Origin");
    if (origin.empty()) return;
    std::string host = req.get_header_value("Host");
    auto scheme = origin.find("://");
    std::string origin_host = scheme == std::string::npos ? origin : origin.substr(scheme + 3);
    if (origin_host != host) throw BadRequest("cross-origin requests are refused (Origin " + printableText(origin, 80) + ")");
  }

  void routeStatic() {
    allowOnly("/", "GET");
    allowOnly(kAssetPattern, "GET");
    http_.Get("/", [](const httplib::Request&, httplib::Response& res) {
      if (const Asset* page = findAsset("index.html")) {
        send(res, Reply::ofBytes("text/html; charset=utf-8", std::string(page->bytes())));
      } else {
        send(res, Reply::ofBytes("text/html; charset=utf-8",
                                 "<!doctype html><title>procgen studio</title><p>This procgen was built without "
                                 "the studio page (node and npm were not found at build time); the API under "
                                 "/api/ works. Run scripts/install-deps.sh and rebuild.</p>"));
      }
    });
    http_.Get(kAssetPattern, [](const httplib::Request& req, httplib::Response& res) {
      const Asset* asset = findAsset(req.matches[1].str());
      if (!asset) {
        send(res, Reply::ofJson({{"error", {{"kind", "not_found"}, {"message", "no such file"}}}}, 404));
        return;
      }
      send(res, Reply::ofBytes(contentTypeOf(asset->path), std::string(asset->bytes())));
    });
  }

  static constexpr const char* kAssetPattern = R"(/([A-Za-z0-9_.-]+\.(js|css|html|png|svg|map)))";
  StudioOptions options_;
  uint64_t memory_budget_ = 0;
  httplib::Server http_;
  JobSlots slots_;
  Channels channels_;
  int port_ = -1;
};

StudioServer::StudioServer(StudioOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  auto& http = impl_->http_;
  // One thread per open connection: browsers keep several alive.
  http.new_task_queue = [] { return new httplib::ThreadPool(32); };
  http.set_payload_max_length(impl_->options_.max_body_bytes);
  // httplib's default also sets SO_REUSEPORT, which lets a second server bind
  // the same port and take half the connections: reuse the address only.
  http.set_socket_options([](socket_t socket) {
    int yes = 1;
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    // A frame's last bytes go out at once (no Nagle wait for an ACK): a
    // progressive reply's first frame is meant to arrive before the next.
    setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  });
  http.set_keep_alive_timeout(5);
  http.set_read_timeout(30);
  http.set_write_timeout(30);
  impl_->routeStatic();
  registerAllEndpoints(*impl_);
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    const char* kind = res.status == 404 ? "not_found" : res.status == 413 ? "too_large" : "request";
    std::string message = res.status == 404   ? "no such endpoint: " + printableText(req.path, 120)
                          : res.status == 413 ? "the request body is larger than the server accepts"
                                              : "HTTP error " + std::to_string(res.status);
    res.set_content(json({{"error", {{"kind", kind}, {"message", message}}}}).dump(), "application/json");
  });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      send(res, errorReply(e));
      return;
    } catch (...) {
    }
    send(res, Reply::ofJson({{"error", {{"kind", "internal"}, {"message", "unknown error"}}}}, 500));
  });
  if (!impl_->options_.quiet) {
    http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      std::fprintf(stderr, "procgen serve: %s %s %d\n", req.method.c_str(), printableText(req.path, 120).c_str(),
                   res.status);
    });
  }
}

StudioServer::~StudioServer() { stop(); }

int StudioServer::bind() {
  auto& o = impl_->options_;
  int port = o.port == 0 ? impl_->http_.bind_to_any_port(o.host.c_str())
                         : (impl_->http_.bind_to_port(o.host.c_str(), o.port) ? o.port : -1);
  if (port < 0)
    throw Error("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                    " (address in use, or not an address of this machine)",
                ExitCode::kUsage);
  impl_->port_ = port;
  return port;
}

void StudioServer::run() { impl_->http_.listen_after_bind(); }
void StudioServer::stop() { impl_->http_.stop(); }
int StudioServer::port() const { return impl_->port_; }
const StudioOptions& StudioServer::options() const { return impl_->options_; }

bool studioPageAvailable() { return studio::findAsset("index.html") != nullptr; }

}  // namespace procgen

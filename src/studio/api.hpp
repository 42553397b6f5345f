// The studio's endpoint toolkit (issue 20): what an endpoint file sees of the
// HTTP server. Endpoint files (api_<system>.cpp) register handlers on an Api;
// the server (server.cpp) turns requests into Params, runs handlers as Jobs
// (a slot among max_jobs, a deadline, cancellation by a newer request on the
// same channel), and turns exceptions into 4xx replies. No endpoint file
// includes httplib, so endpoints are testable without sockets.
//
// Wire formats (docs/studio.md): requests are JSON objects; replies are JSON,
// or Frames — a JSON header plus typed binary buffers — one per reply, or
// several in a stream (progressive flames).
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "procgen/backend.hpp"
#include "procgen/error.hpp"
#include "procgen/memory.hpp"
#include "procgen/studio.hpp"

namespace procgen::studio {

using json = nlohmann::json;

/// A malformed request: not a JSON object, a missing field, a value of the
/// wrong type or out of range. The reply is 400 with the message.
class BadRequest : public Error {
 public:
  explicit BadRequest(const std::string& message) : Error(message, ExitCode::kUsage) {}
};

/// A job stopped because a newer request on its channel (or a closed
/// connection) made it stale. The reply is 409 (nobody is waiting for it).
class Cancelled : public Error {
 public:
  Cancelled() : Error("cancelled by a newer request", ExitCode::kBadInput) {}
};

/// Every job slot is taken (procgen serve --max-jobs). The reply is 429.
class Busy : public Error {
 public:
  explicit Busy(const std::string& message) : Error(message, ExitCode::kBadInput) {}
};

/// A job ran past the server's time limit. The reply is 422.
class TimeLimitExceeded : public Error {
 public:
  explicit TimeLimitExceeded(const std::string& message) : Error(message, ExitCode::kBadInput) {}
};

/// The JSON object of a request, with checked access: every getter throws
/// BadRequest naming the field when it has the wrong type or range.
class Params {
 public:
  Params() : json_(json::object()) {}
  explicit Params(json object);
  /// Parses a request body; an empty body is an empty object. Throws BadRequest.
  static Params parse(std::string_view body);

  bool has(std::string_view key) const;
  double number(std::string_view key, double fallback, double min, double max) const;
  int64_t integer(std::string_view key, int64_t fallback, int64_t min, int64_t max) const;
  uint64_t seed(std::string_view key, uint64_t fallback) const;  ///< any non-negative integer (or a decimal string)
  bool boolean(std::string_view key, bool fallback) const;
  std::string string(std::string_view key, std::string fallback, size_t max_bytes = 4096) const;
  /// One of `choices`; throws BadRequest listing them.
  std::string choice(std::string_view key, std::string fallback, const std::vector<std::string>& choices) const;
  /// A nested object (empty Params when absent). Throws BadRequest when not an object.
  Params object(std::string_view key) const;
  /// A numeric array of at most `max_size` finite numbers (empty when absent).
  std::vector<double> numbers(std::string_view key, size_t max_size) const;
  const json& raw() const { return json_; }

 private:
  const json* find(std::string_view key) const;
  json json_;
};

/// A binary reply: a JSON header and named, typed buffers. Encoding:
///   "PGF1" | u32 header bytes | u64 body bytes | header JSON | zero pad to 8 | body
/// (little-endian). header["buffers"] lists {name, dtype, count, offset, bytes}
/// with offsets into the body, each buffer 8-byte aligned. dtypes: f32 f64 u8
/// u16 u32 i32 u64. web/src/frames.js decodes it.
class Frame {
 public:
  json header = json::object();
  void addBuffer(std::string name, std::string_view dtype, const void* data, size_t bytes, size_t count);
  template <typename T>
  void add(std::string name, const T* data, size_t count) {
    addBuffer(std::move(name), dtypeOf<T>(), data, count * sizeof(T), count);
  }
  template <typename Vector>
  void add(std::string name, const Vector& values) {
    add(std::move(name), values.data(), values.size());
  }
  /// Adds a buffer of `count` elements and returns where to write them, in
  /// the frame's body (no copy of a big buffer); the pointer is valid until
  /// the next buffer is added, or until the body outgrows reserve().
  template <typename T>
  T* allocate(std::string name, size_t count) {
    return static_cast<T*>(allocateBuffer(std::move(name), dtypeOf<T>(), count * sizeof(T), count));
  }
  void* allocateBuffer(std::string name, std::string_view dtype, size_t bytes, size_t count);
  /// Room for `bytes` of buffers (each padded to 8), so allocate() does not move the body.
  void reserve(size_t bytes) { body_.reserve(bytes); }
  std::string encode() const;
  /// encode() in two parts: the bytes before the body, and the body itself.
  std::string encodeHead() const;
  std::string_view body() const { return {body_.data(), body_.size()}; }
  size_t bodyBytes() const { return body_.size(); }

 private:
  template <typename T>
  static constexpr std::string_view dtypeOf() {
    if constexpr (std::is_same_v<T, float>) return "f32";
    else if constexpr (std::is_same_v<T, double>) return "f64";
    else if constexpr (std::is_same_v<T, uint8_t>) return "u8";
    else if constexpr (std::is_same_v<T, uint16_t>) return "u16";
    else if constexpr (std::is_same_v<T, uint32_t>) return "u32";
    else if constexpr (std::is_same_v<T, int32_t>) return "i32";
    else if constexpr (std::is_same_v<T, uint64_t>) return "u64";
    else static_assert(sizeof(T) == 0, "unsupported dtype");
  }
  /// Large-array memory (procgen/memory.hpp): a big frame reuses the pages an
  /// earlier one faulted in, and allocate() leaves its buffer unset for the caller.
  OverwriteVector<char> body_;
};

/// Positions as u16 normalized into a box (half the bytes of f32; the page's
/// viewer.js places them with the box): q = round((p − lo) / (hi − lo) · 65535)
/// per axis, clamped, 0 on a flat axis. Every endpoint that sends positions
/// uses it, so the page decodes one convention.
class U16Quantizer {
 public:
  U16Quantizer(const std::array<double, 3>& lo, const std::array<double, 3>& hi) : lo_(lo) {
    for (int a = 0; a < 3; ++a) {
      const double extent = hi[a] - lo[a];
      scale_[a] = extent > 0 ? 65535.0 / extent : 0.0;
    }
  }
  uint16_t operator()(double x, int axis) const {
    const double q = (x - lo_[axis]) * scale_[axis] + 0.5;
    return static_cast<uint16_t>(q <= 0 ? 0.0 : q >= 65535.0 ? 65535.0 : q);
  }
  template <typename Vec>
  void put(const Vec& v, uint16_t* out) const {
    out[0] = (*this)(v.x, 0), out[1] = (*this)(v.y, 1), out[2] = (*this)(v.z, 2);
  }

 private:
  std::array<double, 3> lo_, scale_;
};

/// One running computation. Handlers call check() between stages (and from
/// library progress callbacks) so a stale or overdue job stops early.
class Job {
 public:
  Job(std::shared_ptr<std::atomic<bool>> cancelled, std::chrono::steady_clock::time_point deadline,
      double time_limit_seconds, uint64_t memory_budget, int max_threads);
  /// Throws Cancelled or TimeLimitExceeded.
  void check() const;
  bool cancelled() const { return cancelled_->load(std::memory_order_relaxed); }
  bool overdue() const;  ///< past the deadline (check() would throw TimeLimitExceeded)
  uint64_t memoryBudget() const { return memory_budget_; }
  /// The request's "backend" ("serial", "cpu", "opencl"; default cpu when
  /// built, else serial) and "threads" (0 = the server's), checked.
  Execution execution(const Params& params) const;
  double elapsedMs() const;

 private:
  std::shared_ptr<std::atomic<bool>> cancelled_;
  std::chrono::steady_clock::time_point start_, deadline_;
  double time_limit_seconds_;
  uint64_t memory_budget_;
  int max_threads_;
};

struct Request {
  Params params;                         ///< the JSON body (POST) or the query string (GET, values are strings)
  std::string body;                      ///< the raw body
  std::vector<std::string> path_params;  ///< the path pattern's captures (e.g. /api/examples/(.+))
  std::string client;                    ///< header X-Procgen-Client (at most 128 bytes; empty when absent)
};

struct Reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string filename;  ///< non-empty: sent as an attachment (Content-Disposition)
  static Reply ofJson(const json& value, int status = 200);
  static Reply ofFrame(const Frame& frame);
  static Reply ofBytes(std::string content_type, std::string body, std::string filename = {});
};

/// Where a streaming handler sends its frames. send() throws Cancelled when
/// the client has gone (the connection closed) or the job was superseded.
class FrameStream {
 public:
  virtual ~FrameStream() = default;
  virtual void send(const Frame& frame) = 0;
};

using Handler = std::function<Reply(const Request&, Job&)>;
/// Sends a progressive reply's frames (runs after the 200 status went out).
using FrameProducer = std::function<void(FrameStream&)>;
/// Checks the request — what it throws becomes a plain 4xx reply, as for
/// compute() — and returns the producer of the frames, which may capture the
/// Job by reference (it outlives the producer). An error the producer throws
/// arrives as a last frame holding `error` and `status`.
using StreamHandler = std::function<FrameProducer(const Request&, Job&)>;

/// What an endpoint file registers. `channel` names the stream of requests a
/// newer one supersedes (with the client id of header X-Procgen-Client):
/// e.g. "lsystem.geometry".
class Api {
 public:
  virtual ~Api() = default;
  /// A computation: POST, runs as a Job.
  virtual void compute(std::string path, std::string channel, Handler handler) = 0;
  /// A progressive computation: POST, replies with a chunked stream of frames.
  virtual void stream(std::string path, std::string channel, StreamHandler handler) = 0;
  /// A computation on an uploaded file: POST with the file as the raw body
  /// (Request::body, up to max_body_bytes) and the parameters in the query
  /// string (Request::params, values are strings); runs as a Job.
  virtual void upload(std::string path, std::string channel, Handler handler) = 0;
  /// A cheap lookup: GET, no job slot (the Job it gets has no deadline).
  virtual void lookup(std::string path, Handler handler) = 0;
  virtual const StudioOptions& options() const = 0;
};

/// A file embedded at build time (the page bundle, the examples).
struct Asset {
  const char* path;  ///< e.g. "studio.js", "examples/lsystems/plant-2d.l"
  const char* begin;
  const char* end;
  std::string_view bytes() const { return {begin, static_cast<size_t>(end - begin)}; }
};
/// nullptr when not embedded.
const Asset* findAsset(std::string_view path);
/// The assets whose path starts with `prefix`, in path order.
std::vector<const Asset*> assetsUnder(std::string_view prefix);

/// The error reply for an exception (what the server sends; tests use it too):
/// {"error": {"kind", "message", and for parse errors "line", "column", "file"}}.
Reply errorReply(const std::exception& error);

// The endpoint files; registerAllEndpoints calls each.
void registerInfoEndpoints(Api& api);     // server.cpp: /api/info, /api/examples
void registerLsystemEndpoints(Api& api);  // api_lsystem.cpp
void registerNoiseEndpoints(Api& api);    // api_noise.cpp
void registerFlameEndpoints(Api& api);    // api_flame.cpp
void registerOctreeEndpoints(Api& api);   // api_octree.cpp
void registerAllEndpoints(Api& api);

/// The L-system preview's chain pass (api_lsystem.cpp): 1 scalar, 2 AVX-512
/// (the default where the CPU has it); 0 or more than the CPU has: the best.
/// Returns the one in use. For tests that compare the two.
int setPreviewIsaForTesting(int isa);

}  // namespace procgen::studio

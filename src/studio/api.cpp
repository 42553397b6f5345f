// The studio's request/reply toolkit (src/studio/api.hpp): checked JSON
// parameters, binary frames, jobs, and the mapping of exceptions to replies.
#include "studio/api.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <new>
#include <thread>

namespace procgen::studio {

namespace {

std::string quoted(std::string_view key) { return "'" + std::string(key) + "'"; }

const char* typeName(const json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_number()) return "a number";
  return "null";
}

std::string formatNumber(double value) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return std::string(text, ec == std::errc() ? end : text);
}

}  // namespace

// ---------------------------------------------------------------------------
// Params
// ---------------------------------------------------------------------------

Params::Params(json object) : json_(std::move(object)) {
  if (!json_.is_object()) throw BadRequest(std::string("the request must be a JSON object, not ") + typeName(json_));
}

Params Params::parse(std::string_view body) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return Params();
  // Depth is bounded by nlohmann's recursion only through the body size cap;
  // a parser callback refuses nesting deeper than a request ever needs.
  int depth = 0;
  auto limit_depth = [&depth](int, json::parse_event_t event, json&) {
    if (event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) {
      if (++depth > 64) throw BadRequest("the request nests deeper than 64 levels");
    } else if (event == json::parse_event_t::object_end || event == json::parse_event_t::array_end) {
      --depth;
    }
    return true;
  };
  json value;
  try {
    value = json::parse(body.begin(), body.end(), limit_depth);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    throw BadRequest(std::string("the request is not valid JSON: ") + printableText(e.what(), 200));
  }
  return Params(std::move(value));
}

const json* Params::find(std::string_view key) const {
  auto it = json_.find(key);
  if (it == json_.end() || it->is_null()) return nullptr;
  return &*it;
}

bool Params::has(std::string_view key) const { return find(key) != nullptr; }

double Params::number(std::string_view key, double fallback, double min, double max) const {
  const json* value = find(key);
  if (!value) return fallback;
  double x;
  if (value->is_number()) {
    x = value->get<double>();
  } else if (value->is_string()) {  // query strings carry numbers as text
    const std::string& text = value->get_ref<const std::string&>();
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
    if (ec != std::errc() || end != text.data() + text.size())
      throw BadRequest(quoted(key) + " must be a number, not '" + printableText(text, 40) + "'");
  } else {
    throw BadRequest(quoted(key) + " must be a number, not " + typeName(*value));
  }
  if (!std::isfinite(x) || x < min || x > max)
    throw BadRequest(quoted(key) + " must be in [" + formatNumber(min) + ", " + formatNumber(max) + "], not " +
                     formatNumber(x));
  return x;
}

int64_t Params::integer(std::string_view key, int64_t fallback, int64_t min, int64_t max) const {
  const json* value = find(key);
  if (!value) return fallback;
  double x = number(key, 0, -9.2e18, 9.2e18);
  if (x != std::floor(x)) throw BadRequest(quoted(key) + " must be an integer, not " + formatNumber(x));
  auto n = static_cast<int64_t>(x);
  if (n < min || n > max)
    throw BadRequest(quoted(key) + " must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], not " +
                     std::to_string(n));
  return n;
}

uint64_t Params::seed(std::string_view key, uint64_t fallback) const {
  const json* value = find(key);
  if (!value) return fallback;
  if (value->is_number_unsigned()) return value->get<uint64_t>();
  if (value->is_number_integer() && value->get<int64_t>() >= 0) return static_cast<uint64_t>(value->get<int64_t>());
  if (value->is_string()) {
    const std::string& text = value->get_ref<const std::string&>();
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec == std::errc() && end == text.data() + text.size() && !text.empty()) return n;
  }
  throw BadRequest(quoted(key) + " must be a non-negative integer below 2^64");
}

bool Params::boolean(std::string_view key, bool fallback) const {
  const json* value = find(key);
  if (!value) return fallback;
  if (value->is_boolean()) return value->get<bool>();
  if (value->is_string()) {
    const std::string& text = value->get_ref<const std::string&>();
    if (text == "true" || text == "1") return true;
    if (text == "false" || text == "0") return false;
  }
  throw BadRequest(quoted(key) + " must be true or false");
}

std::string Params::string(std::string_view key, std::string fallback, size_t max_bytes) const {
  const json* value = find(key);
  if (!value) return fallback;
  if (!value->is_string()) throw BadRequest(quoted(key) + " must be a string, not " + typeName(*value));
  const std::string& text = value->get_ref<const std::string&>();
  if (text.size() > max_bytes)
    throw BadRequest(quoted(key) + " is " + std::to_string(text.size()) + " bytes; at most " +
                     std::to_string(max_bytes) + " are accepted");
  return text;
}

std::string Params::choice(std::string_view key, std::string fallback, const std::vector<std::string>& choices) const {
  std::string value = string(key, std::move(fallback), 64);
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return value;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  throw BadRequest(quoted(key) + " must be one of " + list + ", not '" + printableText(value, 40) + "'");
}

Params Params::object(std::string_view key) const {
  const json* value = find(key);
  if (!value) return Params();
  if (!value->is_object()) throw BadRequest(quoted(key) + " must be an object, not " + typeName(*value));
  return Params(*value);
}

std::vector<double> Params::numbers(std::string_view key, size_t max_size) const {
  const json* value = find(key);
  if (!value) return {};
  if (!value->is_array()) throw BadRequest(quoted(key) + " must be an array, not " + typeName(*value));
  if (value->size() > max_size)
    throw BadRequest(quoted(key) + " has " + std::to_string(value->size()) + " elements; at most " +
                     std::to_string(max_size) + " are accepted");
  std::vector<double> out;
  out.reserve(value->size());
  for (const json& element : *value) {
    if (!element.is_number()) throw BadRequest(quoted(key) + " must hold numbers only");
    double x = element.get<double>();
    if (!std::isfinite(x)) throw BadRequest(quoted(key) + " must hold finite numbers only");
    out.push_back(x);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Frame
// ---------------------------------------------------------------------------

void Frame::addBuffer(std::string name, std::string_view dtype, const void* data, size_t bytes, size_t count) {
  size_t offset = body_.size();
  const char* bytes_in = static_cast<const char*>(data);
  body_.insert(body_.end(), bytes_in, bytes_in + bytes);
  body_.resize((body_.size() + 7) & ~size_t{7}, '\0');
  if (!header.contains("buffers")) header["buffers"] = json::array();
  header["buffers"].push_back(
      {{"name", std::move(name)}, {"dtype", dtype}, {"count", count}, {"offset", offset}, {"bytes", bytes}});
}

void* Frame::allocateBuffer(std::string name, std::string_view dtype, size_t bytes, size_t count) {
  size_t offset = body_.size();
  size_t end = (offset + bytes + 7) & ~size_t{7};
  body_.resize(end);  // unset: the caller writes the buffer
  std::fill(body_.begin() + static_cast<ptrdiff_t>(offset + bytes), body_.end(), '\0');  // the padding
  if (!header.contains("buffers")) header["buffers"] = json::array();
  header["buffers"].push_back(
      {{"name", std::move(name)}, {"dtype", dtype}, {"count", count}, {"offset", offset}, {"bytes", bytes}});
  return body_.data() + offset;
}

std::string Frame::encodeHead() const {
  std::string head = header.dump(-1, ' ', false, json::error_handler_t::replace);
  size_t padded = (16 + head.size() + 7) & ~size_t{7};
  std::string out;
  out.reserve(padded);
  auto put32 = [&out](uint32_t v) { for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i))); };
  out.append("PGF1");
  put32(static_cast<uint32_t>(head.size()));
  uint64_t body_bytes = body_.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(body_bytes >> (8 * i)));
  out.append(head);
  out.resize(padded, '\0');
  return out;
}

std::string Frame::encode() const {
  std::string out = encodeHead();
  out.append(body_.data(), body_.size());
  return out;
}

// ---------------------------------------------------------------------------
// Job
// ---------------------------------------------------------------------------

Job::Job(std::shared_ptr<std::atomic<bool>> cancelled, std::chrono::steady_clock::time_point deadline,
         double time_limit_seconds, uint64_t memory_budget, int max_threads)
    : cancelled_(std::move(cancelled)),
      start_(std::chrono::steady_clock::now()),
      deadline_(deadline),
      time_limit_seconds_(time_limit_seconds),
      memory_budget_(memory_budget),
      max_threads_(max_threads) {}

bool Job::overdue() const { return std::chrono::steady_clock::now() > deadline_; }

void Job::check() const {
  if (cancelled()) throw Cancelled();
  if (overdue())
    throw TimeLimitExceeded("the computation ran past the server's time limit of " +
                            formatNumber(time_limit_seconds_) + " s (procgen serve --time-limit)");
}

Execution Job::execution(const Params& params) const {
  std::string fallback = backendAvailable(Backend::kCpu) ? "cpu" : "serial";
  std::string name = params.choice("backend", fallback, {"serial", "cpu", "opencl"});
  Execution execution;
  execution.backend = *parseBackend(name);
  if (!backendAvailable(execution.backend))
    throw BackendUnavailableError("the " + name + " backend is not built into this procgen");
  const int cores = effectiveThreads(Execution{Backend::kCpu, 0});  // the cores this process may use
  int limit = max_threads_ > 0 ? max_threads_ : cores;
  execution.threads = static_cast<int>(params.integer("threads", limit, 1, limit));
  return execution;
}

double Job::elapsedMs() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
}

// ---------------------------------------------------------------------------
// Replies
// ---------------------------------------------------------------------------

Reply Reply::ofJson(const json& value, int status) {
  Reply reply;
  reply.status = status;
  reply.body = value.dump(-1, ' ', false, json::error_handler_t::replace);
  return reply;
}

Reply Reply::ofFrame(const Frame& frame) {
  return ofBytes("application/octet-stream", frame.encode());
}

Reply Reply::ofBytes(std::string content_type, std::string body, std::string filename) {
  Reply reply;
  reply.content_type = std::move(content_type);
  reply.body = std::move(body);
  reply.filename = std::move(filename);
  return reply;
}

Reply errorReply(const std::exception& error) {
  int status = 422;
  json detail = {{"message", printableText(error.what(), 2000)}};
  if (const auto* parse = dynamic_cast<const ParseError*>(&error)) {
    detail["kind"] = "parse";
    detail["message"] = parse->message();
    detail["diagnostic"] = parse->what();
    detail["file"] = parse->location().file;
    detail["line"] = parse->location().line;
    detail["column"] = parse->location().column;
  } else if (dynamic_cast<const BadRequest*>(&error)) {
    status = 400, detail["kind"] = "request";
  } else if (dynamic_cast<const Cancelled*>(&error)) {
    status = 409, detail["kind"] = "cancelled";
  } else if (dynamic_cast<const Busy*>(&error)) {
    status = 429, detail["kind"] = "busy";
  } else if (dynamic_cast<const TimeLimitExceeded*>(&error)) {
    detail["kind"] = "time_limit";
  } else if (dynamic_cast<const ResourceError*>(&error)) {
    detail["kind"] = "budget";
  } else if (dynamic_cast<const BackendUnavailableError*>(&error)) {
    detail["kind"] = "backend";
  } else if (dynamic_cast<const OutputError*>(&error)) {
    status = 500, detail["kind"] = "output";
  } else if (const auto* procgen_error = dynamic_cast<const Error*>(&error)) {
    detail["kind"] = "input";
    if (procgen_error->exitCode() == ExitCode::kUsage) status = 400, detail["kind"] = "request";
  } else if (dynamic_cast<const std::bad_alloc*>(&error)) {
    detail["kind"] = "budget";
    detail["message"] = "out of memory: the request needs more memory than the server can give it";
  } else {
    status = 500, detail["kind"] = "internal";
  }
  return Reply::ofJson({{"error", detail}}, status);
}

void registerAllEndpoints(Api& api) {
  registerInfoEndpoints(api);
  registerLsystemEndpoints(api);
  registerNoiseEndpoints(api);
  registerFlameEndpoints(api);
  registerOctreeEndpoints(api);
}

}  // namespace procgen::studio

// A studio server on a free loopback port, running on its own thread for one
// test, and a client that talks to it over real HTTP (httplib's client).
// Endpoint tests (tests/studio/*_test.cpp) use it:
//   TestServer server;                         // options may be given
//   auto reply = server.post("/api/noise/field", R"({"size": 64})");
//   EXPECT_EQ(reply.status, 200);
//   DecodedFrame frame = decodeFrame(reply.body);   // independent decoder of the wire format
#pragma once

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "procgen/studio.hpp"

namespace procgen::studio_test {

struct HttpReply {
  int status = 0;
  std::string content_type;
  std::string body;
  std::map<std::string, std::string> headers;
  nlohmann::json json() const { return nlohmann::json::parse(body); }
};

class TestServer {
 public:
  explicit TestServer(StudioOptions options = quietOptions()) : server_(withFreePort(std::move(options))) {
    port_ = server_.bind();
    thread_ = std::thread([this] { server_.run(); });
  }
  ~TestServer() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }

  HttpReply get(const std::string& path) const { return convert(client().Get(path.c_str())); }
  HttpReply post(const std::string& path, const std::string& body, const std::string& client_id = "") const {
    httplib::Headers headers;
    if (!client_id.empty()) headers.emplace("X-Procgen-Client", client_id);
    return convert(client().Post(path.c_str(), headers, body, "application/json"));
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(120);
    return c;
  }

  static StudioOptions quietOptions() {
    StudioOptions o;
    o.quiet = true;
    return o;
  }

 private:
  static StudioOptions withFreePort(StudioOptions o) {
    o.port = 0;
    o.host = "127.0.0.1";
    return o;
  }
  static HttpReply convert(const httplib::Result& result) {
    if (!result) throw std::runtime_error("no reply from the test server: " + httplib::to_string(result.error()));
    HttpReply reply;
    reply.status = result->status;
    reply.body = result->body;
    reply.content_type = result->get_header_value("Content-Type");
    for (const auto& [k, v] : result->headers) reply.headers[k] = v;
    return reply;
  }

  StudioServer server_;
  int port_ = 0;
  std::thread thread_;
};

/// A decoded frame: written from docs/studio.md's description of the format,
/// independently of src/studio/api.cpp's encoder.
struct DecodedFrame {
  nlohmann::json header;
  std::map<std::string, std::string> buffers;  ///< name → raw bytes
  size_t bytes = 0;                             ///< the frame's length in its stream

  template <typename T>
  std::vector<T> as(const std::string& name) const {
    const std::string& raw = buffers.at(name);
    std::vector<T> out(raw.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), raw.data(), out.size() * sizeof(T));
    return out;
  }
};

inline uint64_t readLittleEndian(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s.at(at + i));
  return v;
}

/// Decodes the frame at `offset` of `stream`; throws std::runtime_error on a malformed one.
inline DecodedFrame decodeFrame(const std::string& stream, size_t offset = 0) {
  if (stream.size() < offset + 16 || stream.compare(offset, 4, "PGF1") != 0) throw std::runtime_error("not a frame");
  uint64_t header_bytes = readLittleEndian(stream, offset + 4, 4);
  uint64_t body_bytes = readLittleEndian(stream, offset + 8, 8);
  uint64_t body_start = offset + ((16 + header_bytes + 7) / 8) * 8;
  if (stream.size() < body_start + body_bytes) throw std::runtime_error("truncated frame");
  DecodedFrame frame;
  frame.header = nlohmann::json::parse(stream.substr(offset + 16, header_bytes));
  frame.bytes = body_start + body_bytes - offset;
  if (frame.header.contains("buffers")) {
    for (const auto& b : frame.header["buffers"]) {
      uint64_t at = b["offset"].get<uint64_t>(), n = b["bytes"].get<uint64_t>();
      if (at % 8 != 0 || at + n > body_bytes) throw std::runtime_error("buffer outside the body");
      frame.buffers[b["name"].get<std::string>()] = stream.substr(body_start + at, n);
    }
  }
  return frame;
}

/// Every frame of a streamed reply, in order.
inline std::vector<DecodedFrame> decodeFrames(const std::string& stream) {
  std::vector<DecodedFrame> frames;
  for (size_t at = 0; at < stream.size();) {
    frames.push_back(decodeFrame(stream, at));
    at += frames.back().bytes;
  }
  return frames;
}

}  // namespace procgen::studio_test

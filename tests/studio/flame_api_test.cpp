// The studio's flame endpoints (src/studio/api_flame.cpp) over real HTTP:
// a one-pass render is renderFlame byte for byte (after PNG decoding, by
// libpng through png_decoder.hpp); passes refine towards a full render; the
// sum of passes with different seeds is as close to one full-quality render
// as two full renders with different seeds are to each other (PSNR); the
// genome description matches the reader and the file's text; parse errors
// carry line:col; a newer request on the channel cancels a stream; job slots
// give 429; bad parameters give 400.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "procgen/flame.hpp"
#include "procgen/flame_render.hpp"
#include "procgen/png_decoder.hpp"
#include "studio/studio_client.hpp"

namespace procgen {
namespace {

using nlohmann::json;
using studio_test::DecodedFrame;
using studio_test::HttpReply;
using studio_test::TestServer;

std::string example(const std::string& name) {
  std::ifstream in(std::filesystem::path(PROCGEN_SOURCE_DIR) / "examples/flames" / name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<DecodedFrame> renderFrames(const TestServer& server, const json& body,
                                       const std::string& client = "") {
  HttpReply reply = server.post("/api/flame/render", body.dump(), client);
  EXPECT_EQ(reply.status, 200) << reply.body.substr(0, 300);
  return studio_test::decodeFrames(reply.body);
}

Rgb8Image framePng(const DecodedFrame& frame) {
  const std::string& png = frame.buffers.at("png");
  return decodePng(png.data(), png.size(), "frame");
}

/// Peak signal-to-noise ratio of two 8-bit images of one size, in dB.
double psnr(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  EXPECT_EQ(a.size(), b.size());
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = double(a[i]) - double(b[i]);
    sum += d * d;
  }
  const double mse = sum / double(a.size());
  return mse == 0 ? 99.0 : 10.0 * std::log10(255.0 * 255.0 / mse);
}

/// The error of a render request: a plain JSON reply when the request is
/// refused before streaming (bad parameters, genome, budget), else the
/// stream's last frame.
json renderError(const TestServer& server, const json& body) {
  HttpReply reply = server.post("/api/flame/render", body.dump());
  if (reply.status != 200) {
    json e = reply.json()["error"];
    e["status"] = reply.status;
    return e;
  }
  const auto frames = studio_test::decodeFrames(reply.body);
  if (frames.empty() || !frames.back().header.contains("error")) return json();
  json e = frames.back().header["error"];
  e["status"] = frames.back().header["status"];
  return e;
}

/// A stream read as it arrives, on its own thread: frames are counted as they
/// come, so a test can act after the first one.
class StreamReader {
 public:
  StreamReader(const TestServer& server, json body, std::string client) {
    thread_ = std::thread([this, &server, body = std::move(body), client = std::move(client)] {
      httplib::Client c = server.client();
      httplib::Request req;
      req.method = "POST";
      req.path = "/api/flame/render";
      req.headers.emplace("X-Procgen-Client", client);
      req.headers.emplace("Content-Type", "application/json");
      req.body = body.dump();
      req.content_receiver = [this](const char* data, size_t n, uint64_t, uint64_t) {
        std::lock_guard lock(mutex_);
        bytes_.append(data, n);
        size_t at = 0;
        frames_.clear();
        for (;;) {
          try {
            DecodedFrame f = studio_test::decodeFrame(bytes_, at);
            at += f.bytes;
            frames_.push_back(std::move(f));
          } catch (const std::exception&) {
            break;  // an incomplete frame: more bytes to come
          }
        }
        arrived_.notify_all();
        return true;
      };
      auto result = c.send(req);
      std::lock_guard lock(mutex_);
      status_ = result ? result->status : -1;
      done_ = true;
      arrived_.notify_all();
    });
  }
  ~StreamReader() { join(); }
  /// Waits until `n` frames arrived (or the stream ended); returns the count.
  size_t waitFrames(size_t n) {
    std::unique_lock lock(mutex_);
    arrived_.wait_for(lock, std::chrono::seconds(60), [&] { return frames_.size() >= n || done_; });
    return frames_.size();
  }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  std::vector<DecodedFrame> frames() {
    std::lock_guard lock(mutex_);
    return frames_;
  }
  int status() {
    std::lock_guard lock(mutex_);
    return status_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::string bytes_;
  std::vector<DecodedFrame> frames_;
  int status_ = 0;
  bool done_ = false;
  std::thread thread_;
};

TEST(StudioFlameRender, OnePassIsRenderFlameByteForByte) {
  TestServer server;
  const std::string text = example("linear.flam3");
  const std::vector<FlameGenome> genomes = parseFlameGenomes(text, "linear.flam3");
  for (const char* backend : {"serial", "cpu"}) {
    if (!backendAvailable(*parseBackend(backend))) continue;
    const auto frames = renderFrames(server, {{"genome", text},
                                              {"flame", 1},
                                              {"width", 200},
                                              {"height", 120},
                                              {"quality", 4},
                                              {"seed", 7},
                                              {"passes", 1},
                                              {"backend", backend}});
    ASSERT_EQ(frames.size(), 1u) << backend;
    const json& h = frames[0].header;
    EXPECT_EQ(h["pass"], 1);
    EXPECT_EQ(h["passes"], 1);
    EXPECT_EQ(h["final"], true);
    EXPECT_EQ(h["quality_so_far"], 4.0);

    FlameRenderOptions options;
    options.width = 200;
    options.height = 120;
    options.quality = 4;
    options.seed = 7;
    FlameRenderStats stats;
    const FlameImage direct = renderFlame(genomes[1], options, Execution{Backend::kSerial, 1}, &stats);
    const Rgb8Image served = framePng(frames[0]);
    ASSERT_EQ(served.width, direct.width);
    ASSERT_EQ(served.height, direct.height);
    ASSERT_EQ(served.channels, direct.channels);
    EXPECT_TRUE(served.pixels == direct.pixels8)
        << backend << ": the streamed image differs from renderFlame's";
    EXPECT_EQ(h["samples"].get<uint64_t>(), stats.samples);
  }
}

TEST(StudioFlameRender, PassesAccumulateAndRefine) {
  TestServer server;
  const std::string text = example("linear.flam3");
  const double quality = 24;
  const json request = {{"genome", text}, {"width", 320}, {"height", 180},   {"quality", quality},
                        {"passes", 4},    {"seed", 3},    {"backend", "cpu"}};
  const auto frames = renderFrames(server, request);
  ASSERT_EQ(frames.size(), 4u);
  // Passes double: after pass k, (2^k − 1)/15 of the samples are in.
  const double total_samples = quality * 320 * 180;
  for (size_t k = 0; k < frames.size(); ++k) {
    const json& h = frames[k].header;
    EXPECT_EQ(h["pass"], k + 1);
    EXPECT_EQ(h["passes"], 4);
    EXPECT_EQ(h["final"], k + 1 == frames.size());
    const double expected = total_samples * (std::ldexp(1.0, int(k) + 1) - 1) / 15;
    EXPECT_NEAR(h["samples"].get<double>(), expected, expected * 0.01 + 64) << "pass " << k + 1;
    EXPECT_NEAR(h["quality_so_far"].get<double>(), quality * (std::ldexp(1.0, int(k) + 1) - 1) / 15, 1e-9);
    if (k > 0) {
      EXPECT_GT(h["samples"].get<uint64_t>(), frames[k - 1].header["samples"].get<uint64_t>());
    }
    for (const char* key : {"iter_ms", "tonemap_ms", "total_ms"}) EXPECT_GE(h[key].get<double>(), 0.0) << key;
  }
  // Refines: each frame is closer to an independent full-quality render (another seed) than the one before.
  FlameRenderOptions options;
  options.width = 320;
  options.height = 180;
  options.quality = quality;
  options.seed = 99;
  const FlameImage reference =
      renderFlame(parseFlameGenomes(text, "linear.flam3")[0], options, Execution{Backend::kSerial, 1});
  double previous = 0;
  for (size_t k = 0; k < frames.size(); ++k) {
    const double p = psnr(framePng(frames[k]).pixels, reference.pixels8);
    EXPECT_GT(p, previous + 0.5) << "pass " << k + 1 << " is no closer to the full render";
    previous = p;
  }
}

TEST(StudioFlameRender, SummedPassesAreStatisticallyOneFullRender) {
  TestServer server;
  const std::string text = example("mixed.flam3");
  const FlameGenome genome = parseFlameGenomes(text, "mixed.flam3")[0];
  const double quality = 40;  // 2.3 M samples: 5 passes of at least 65536
  const auto frames = renderFrames(server, {{"genome", text},
                                            {"width", 320},
                                            {"height", 180},
                                            {"quality", quality},
                                            {"passes", 5},
                                            {"seed", 11},
                                            {"backend", "cpu"}});
  ASSERT_EQ(frames.size(), 5u);
  const Rgb8Image summed = framePng(frames.back());

  auto single = [&](uint64_t seed, double q) {
    FlameRenderOptions options;
    options.width = 320;
    options.height = 180;
    options.quality = q;
    options.seed = seed;
    return renderFlame(genome, options, Execution{Backend::kSerial, 1}).pixels8;
  };
  const auto full_a = single(101, quality), full_b = single(202, quality);
  const double between_full = psnr(full_a, full_b);
  const double summed_vs_full = psnr(summed.pixels, full_a);
  // The sum of 5 passes with their own seeds is one more sample of the same
  // distribution: as close to a full render as another full render is.
  EXPECT_NEAR(summed_vs_full, between_full, 0.5)
      << "summed " << summed_vs_full << " dB, two full renders " << between_full << " dB";
  // The metric tells renders apart: a quarter of the quality is measurably farther.
  const double quarter_vs_full = psnr(single(303, quality / 4), full_a);
  RecordProperty("psnr_summed_vs_full_db", std::to_string(summed_vs_full));
  RecordProperty("psnr_full_vs_full_db", std::to_string(between_full));
  RecordProperty("psnr_quarter_vs_full_db", std::to_string(quarter_vs_full));
  EXPECT_LT(quarter_vs_full, between_full - 1.0) << "quarter " << quarter_vs_full << " dB";
}

TEST(StudioFlameGenome, DescriptionMatchesTheReaderAndTheText) {
  TestServer server;
  const std::string text = example("mixed.flam3");
  const HttpReply reply = server.post("/api/flame/genome", json({{"genome", text}}).dump());
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json d = reply.json();
  const std::vector<FlameGenome> genomes = parseFlameGenomes(text, "mixed.flam3");
  ASSERT_EQ(d["flames"].size(), genomes.size());
  for (size_t i = 0; i < genomes.size(); ++i) {
    const FlameGenome& g = genomes[i];
    const json& f = d["flames"][i];
    EXPECT_EQ(f["name"], g.name);
    EXPECT_EQ(f["line"], g.source_line);
    EXPECT_EQ(f["size"], json::array({g.width, g.height}));
    EXPECT_EQ(f["gamma"], g.gamma);
    EXPECT_EQ(f["brightness"], g.brightness);
    EXPECT_EQ(f["vibrancy"], g.vibrancy);
    ASSERT_EQ(f["xforms"].size(), g.xforms.size());
    for (size_t k = 0; k < g.xforms.size(); ++k) {
      const json& x = f["xforms"][k];
      EXPECT_EQ(x["weight"], g.xforms[k].weight);
      EXPECT_EQ(x["color"], g.xforms[k].color);
      ASSERT_EQ(x["variations"].size(), g.xforms[k].variations.size());
      for (size_t v = 0; v < g.xforms[k].variations.size(); ++v) {
        EXPECT_EQ(x["variations"][v]["name"], flameVariationName(g.xforms[k].variations[v].index));
        EXPECT_EQ(x["variations"][v]["weight"], g.xforms[k].variations[v].weight);
      }
    }
    ASSERT_EQ(f["final_xform"].is_null(), !g.final_xform.has_value());
    if (g.final_xform) {
      EXPECT_EQ(f["final_xform"]["color"], g.final_xform->color);
    }
  }
  // Against the text: flame 0's first xform is fisheye 0.887181 + cosh 0.112819
  // (line 3) and its first colour is "146 62 86" = #923e56.
  const json& x0 = d["flames"][0]["xforms"][0];
  EXPECT_EQ(x0["line"], 3);
  EXPECT_EQ(x0["variations"][0]["name"], "fisheye");
  EXPECT_DOUBLE_EQ(x0["variations"][0]["weight"].get<double>(), 0.887181);
  EXPECT_EQ(x0["variations"][1]["name"], "cosh");
  EXPECT_EQ(d["flames"][0]["palette"].get<std::string>().substr(0, 6), "923e56");
  EXPECT_EQ(d["flames"][0]["palette"].get<std::string>().size(), 256u * 6);
  // Flame 1 has five <xform> elements and <symmetry kind="4">, which adds three
  // rotations without elements: the page edits elements 0..4 only.
  const size_t flame1 = text.find("<flame", text.find("</flame>"));
  const std::string body1 = text.substr(flame1, text.find("</flame>", flame1) - flame1);
  size_t elements = 0;
  for (size_t at = body1.find("<xform"); at != std::string::npos; at = body1.find("<xform", at + 1))
    ++elements;
  ASSERT_EQ(elements, 5u);
  const json& xforms1 = d["flames"][1]["xforms"];
  ASSERT_EQ(xforms1.size(), elements + 3);
  int next_element = 0, added = 0;
  for (const json& x : xforms1) {
    if (x["element"].is_null()) {
      ++added;
    } else {
      EXPECT_EQ(x["element"], next_element++);
    }
  }
  EXPECT_EQ(next_element, 5);
  EXPECT_EQ(added, 3);
}

TEST(StudioFlameGenome, ParseErrorsCarryLineAndColumn) {
  TestServer server;
  // An unknown variation on line 3, at the attribute's name.
  const std::string text =
      "<flames>\n"
      "<flame size=\"64 64\" quality=\"1\">\n"
      "  <xform weight=\"1\" color=\"0\" linear=\"1\" nosuchvariation=\"1\" coefs=\"1 0 0 1 0 0\"/>\n"
      "  <color index=\"0\" rgb=\"255 255 255\"/>\n"
      "</flame>\n"
      "</flames>\n";
  const int column = int(text.find("nosuchvariation") - text.find("  <xform")) + 1;
  const HttpReply reply = server.post("/api/flame/genome", json({{"genome", text}}).dump());
  EXPECT_EQ(reply.status, 422);
  const json e = reply.json()["error"];
  EXPECT_EQ(e["kind"], "parse");
  EXPECT_EQ(e["line"], 3);
  EXPECT_EQ(e["column"], column);
  EXPECT_NE(e["message"].get<std::string>().find("nosuchvariation"), std::string::npos);

  // The render endpoint refuses the genome the same way, before streaming.
  const json se = renderError(server, {{"genome", text}, {"width", 64}, {"height", 64}});
  EXPECT_EQ(se["status"], 422);
  EXPECT_EQ(se["kind"], "parse");
  EXPECT_EQ(se["line"], 3);
  EXPECT_EQ(se["column"], column);

  // A value the reader accepts but the camera refuses (zoom 100: 2^100 pixels
  // per unit) is reported at its <flame> element (line 2, column 1).
  std::string zoomed = text;
  zoomed.replace(zoomed.find("nosuchvariation=\"1\" "), 20, "");
  zoomed.replace(zoomed.find("quality=\"1\""), 11, "quality=\"1\" zoom=\"100\"");
  const json ze = renderError(server, {{"genome", zoomed}, {"width", 64}, {"height", 64}});
  EXPECT_EQ(ze["kind"], "parse");
  EXPECT_EQ(ze["line"], 2);
  EXPECT_EQ(ze["column"], 1);
  EXPECT_NE(ze["message"].get<std::string>().find("zoom"), std::string::npos);

  // Truncated XML: an error with a position inside the text.
  const HttpReply cut = server.post("/api/flame/genome", json({{"genome", text.substr(0, 60)}}).dump());
  EXPECT_EQ(cut.status, 422);
  EXPECT_EQ(cut.json()["error"]["kind"], "parse");
  EXPECT_GE(cut.json()["error"]["line"].get<int>(), 1);
  EXPECT_LE(cut.json()["error"]["line"].get<int>(), 3);
}

TEST(StudioFlameRender, NewerRequestOnTheChannelCancelsTheStream) {
  TestServer server;
  const std::string text = example("trig.flam3");
  // 1.8 G samples: tens of seconds on one serial thread, pass 1 (1/255 of them) a fraction of one.
  StreamReader stale(server,
                     {{"genome", text},
                      {"width", 1280},
                      {"height", 720},
                      {"quality", 2000},
                      {"passes", 8},
                      {"backend", "serial"}},
                     "client-1");
  ASSERT_GE(stale.waitFrames(1), 1u);
  const auto fresh = renderFrames(
      server,
      {{"genome", text}, {"width", 64}, {"height", 36}, {"quality", 2}, {"passes", 1}, {"backend", "serial"}},
      "client-1");
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].header["final"], true);
  stale.join();
  const auto frames = stale.frames();
  EXPECT_EQ(stale.status(), 200);
  ASSERT_GE(frames.size(), 1u);
  EXPECT_LT(frames.size(), 8u) << "the stale stream ran to its end";
  for (const auto& f : frames) {
    EXPECT_FALSE(f.header.contains("error"));  // nobody reads an error frame for a cancelled job
    EXPECT_EQ(f.header["final"], false);
  }
}

TEST(StudioFlameRender, BusySlotsGive429) {
  StudioOptions options = TestServer::quietOptions();
  options.max_jobs = 1;
  TestServer server(options);
  const std::string text = example("trig.flam3");
  // As long as the test above: client-a's job holds the only slot until cancelled.
  StreamReader running(server,
                       {{"genome", text},
                        {"width", 1280},
                        {"height", 720},
                        {"quality", 2000},
                        {"passes", 8},
                        {"backend", "serial"}},
                       "client-a");
  ASSERT_GE(running.waitFrames(1), 1u);
  const HttpReply busy = server.post("/api/flame/render", json({{"genome", text}}).dump(), "client-b");
  EXPECT_EQ(busy.status, 429);
  EXPECT_EQ(busy.json()["error"]["kind"], "busy");
  const HttpReply busy_genome = server.post("/api/flame/genome", json({{"genome", text}}).dump(), "client-b");
  EXPECT_EQ(busy_genome.status, 429);
  // client-a's next request cancels its own stream and takes the slot.
  const auto frames = renderFrames(
      server,
      {{"genome", text}, {"width", 64}, {"height", 36}, {"quality", 1}, {"passes", 1}, {"backend", "serial"}},
      "client-a");
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_FALSE(frames[0].header.contains("error"));
  running.join();
  EXPECT_LT(running.frames().size(), 8u);
}

TEST(StudioFlameRender, BadParametersGet400) {
  TestServer server;
  const std::string text = example("linear.flam3");
  EXPECT_EQ(server.post("/api/flame/render", "{\"genome\": ").status, 400);  // not JSON: a plain reply
  EXPECT_EQ(server.post("/api/flame/render", "[1]").status, 400);
  const std::vector<json> bad = {
      json::object(),                                         // no genome
      {{"genome", 5}},                                        // not text
      {{"genome", text}, {"width", 64}},                      // width without height
      {{"genome", text}, {"width", 4096}, {"height", 64}},    // over 2048
      {{"genome", text}, {"width", 0}, {"height", 64}},       // empty
      {{"genome", text}, {"width", "wide"}, {"height", 64}},  // wrong type
      {{"genome", text}, {"width", 64.5}, {"height", 64}},    // not an integer
      {{"genome", text}, {"quality", 0}},                     // no samples
      {{"genome", text}, {"quality", 1e9}},                   // beyond the cap
      {{"genome", text}, {"passes", 13}},                     // beyond the cap
      {{"genome", text}, {"flame", 2}},                       // the file has flames 0 and 1
      {{"genome", text}, {"flame", -1}},                      //
      {{"genome", text}, {"seed", -3}},                       //
      {{"genome", text}, {"backend", "gpu"}},                 //
      {{"genome", text}, {"threads", 100000}},                //
      {{"genome", std::string((4u << 20) + 1, ' ')}},         // over 4 MiB
  };
  for (const json& body : bad) {
    const json e = renderError(server, body);
    EXPECT_EQ(e["status"], 400) << body.dump().substr(0, 120);
    EXPECT_EQ(e["kind"], "request") << body.dump().substr(0, 120);
  }
  for (const json& body :
       {json::object(), json{{"genome", 5}}, json{{"genome", std::string((4u << 20) + 1, ' ')}}}) {
    const HttpReply reply = server.post("/api/flame/genome", body.dump());
    EXPECT_EQ(reply.status, 400) << body.dump().substr(0, 120);
  }
}

TEST(StudioFlameRender, HistogramOverTheBudgetIsRefusedBeforeRendering) {
  StudioOptions options = TestServer::quietOptions();
  options.memory_budget = 4u << 20;  // 4 MiB: a 2048² histogram of 20-byte buckets is 80 MiB
  TestServer server(options);
  const json e = renderError(
      server, {{"genome", example("linear.flam3")}, {"width", 2048}, {"height", 2048}, {"quality", 1}});
  EXPECT_EQ(e["status"], 422);
  EXPECT_EQ(e["kind"], "budget");
}

}  // namespace
}  // namespace procgen

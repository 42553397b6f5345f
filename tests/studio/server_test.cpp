// The studio server's shared behaviour (src/studio/server.cpp, api.cpp): the
// page and the examples it embeds, JSON errors for unknown endpoints and
// oversized bodies, the checked request parameters and the frame format.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "procgen/error.hpp"
#include "studio/api.hpp"
#include "studio/studio_client.hpp"

namespace procgen {
namespace {

using studio::BadRequest;
using studio::Params;
using studio_test::TestServer;

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(StudioServer, ServesThePageAndItsBundle) {
  TestServer server;
  auto page = server.get("/");
  ASSERT_EQ(page.status, 200);
  EXPECT_NE(page.content_type.find("text/html"), std::string::npos);
  if (!studioPageAvailable()) GTEST_SKIP() << "built without node/npm: no page bundle";
  EXPECT_NE(page.body.find("studio.js"), std::string::npos);
  auto script = server.get("/studio.js");
  ASSERT_EQ(script.status, 200);
  EXPECT_NE(script.content_type.find("javascript"), std::string::npos);
  EXPECT_GT(script.body.size(), 1000u);
  EXPECT_EQ(server.get("/no-such-file.js").status, 404);
}

TEST(StudioServer, ListsAndServesEveryCommittedExampleByteForByte) {
  TestServer server;
  auto list = server.get("/api/examples");
  ASSERT_EQ(list.status, 200);
  std::set<std::string> listed;
  for (const auto& e : list.json()) listed.insert(e["path"].get<std::string>());
  std::set<std::string> expected;
  for (const char* dir : {"examples/lsystems", "examples/flames"}) {
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(PROCGEN_SOURCE_DIR) / dir)) {
      std::string ext = entry.path().extension();
      if (ext == ".l" || ext == ".flam3") expected.insert(std::string(dir) + "/" + entry.path().filename().string());
    }
  }
  EXPECT_EQ(listed, expected);
  for (const std::string& path : expected) {
    auto text = server.get("/api/" + path);
    ASSERT_EQ(text.status, 200) << path;
    EXPECT_EQ(text.body, readFile(std::filesystem::path(PROCGEN_SOURCE_DIR) / path)) << path;
  }
  EXPECT_EQ(server.get("/api/examples/lsystems/none.l").status, 404);
  EXPECT_EQ(server.get("/api/examples/../CMakeLists.txt").status, 404);
}

TEST(StudioServer, InfoNamesTheBackendsAndLimits) {
  StudioOptions options = TestServer::quietOptions();
  options.max_jobs = 3;
  options.time_limit_seconds = 7;
  TestServer server(options);
  auto info = server.get("/api/info").json();
  EXPECT_EQ(info["backends"]["serial"], true);
  EXPECT_EQ(info["backends"]["cpu"], backendAvailable(Backend::kCpu));
  EXPECT_EQ(info["limits"]["max_jobs"], 3);
  EXPECT_EQ(info["limits"]["time_limit_seconds"], 7.0);
}

TEST(StudioServer, UnknownEndpointsAndOversizedBodiesGetJsonErrors) {
  StudioOptions options = TestServer::quietOptions();
  options.max_body_bytes = 1000;
  TestServer server(options);
  auto missing = server.get("/api/nothing-here");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.json()["error"]["kind"], "not_found");
  auto big = server.post("/api/lsystem/derive", std::string(5000, ' '));
  EXPECT_EQ(big.status, 413);
  EXPECT_EQ(server.get("/api/info").status, 200);  // still serving
}

// Two requests of one channel sent ms apart may arrive in either order: the
// page numbers them (X-Procgen-Seq), and an older one arriving while a newer
// one runs is cancelled at once, without cancelling the newer one.
TEST(StudioServer, AnOlderRequestArrivingLateDoesNotCancelTheNewer) {
  TestServer server;
  auto post = [&](const std::string& body, const char* seq) {
    httplib::Headers headers{{"X-Procgen-Client", "page-a"}, {"X-Procgen-Seq", seq}};
    auto result = server.client().Post("/api/noise/terrain", headers, body, "application/json");
    if (!result) throw std::runtime_error("no reply");
    return std::make_pair(result->status, std::string(result->body));
  };
  std::pair<int, std::string> newer;
  std::thread first([&] { newer = post(R"({"size": 256, "backend": "serial"})", "7"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const auto older = post(R"({"size": 16})", "6");
  first.join();
  EXPECT_EQ(older.first, 409);
  EXPECT_NE(older.second.find("cancelled"), std::string::npos) << older.second;
  EXPECT_EQ(newer.first, 200);  // (were it done before the older one came, the older would have run: 200)
  // Without numbers (or the same number), the later arrival is the newer, as before.
  EXPECT_EQ(post(R"({"size": 16})", "").first, 200);
}

TEST(StudioServer, TheOtherMethodOnAPathGets405WithAllow) {
  TestServer server;
  // GET-only paths (lookups, the page) refuse POST; computations refuse GET.
  for (const char* path : {"/api/info", "/api/examples", "/", "/studio.js"}) {
    auto reply = server.post(path, "{}");
    EXPECT_EQ(reply.status, 405) << path;
    EXPECT_EQ(reply.headers["Allow"], "GET") << path;
    EXPECT_EQ(reply.json()["error"]["kind"], "method") << path;
  }
  for (const char* path : {"/api/lsystem/geometry", "/api/lsystem/stream", "/api/flame/render", "/api/octree/upload"}) {
    auto reply = server.get(path);
    EXPECT_EQ(reply.status, 405) << path;
    EXPECT_EQ(reply.headers["Allow"], "POST") << path;
  }
  EXPECT_EQ(server.get("/api/nothing-here").status, 404);  // a path nobody serves is still a 404
}

TEST(StudioParams, ChecksTypesAndRanges) {
  Params p = Params::parse(R"({"n": 5, "x": 0.5, "s": "hi", "b": true, "big": 1e300, "frac": 2.5, "list": [1, 2]})");
  EXPECT_EQ(p.integer("n", 0, 0, 10), 5);
  EXPECT_EQ(p.integer("absent", 7, 0, 10), 7);
  EXPECT_THROW(p.integer("n", 0, 6, 10), BadRequest);
  EXPECT_THROW(p.integer("frac", 0, 0, 10), BadRequest);
  EXPECT_THROW(p.integer("s", 0, 0, 10), BadRequest);
  EXPECT_DOUBLE_EQ(p.number("x", 0, 0, 1), 0.5);
  EXPECT_THROW(p.number("big", 0, 0, 1e10), BadRequest);
  EXPECT_EQ(p.string("s", ""), "hi");
  EXPECT_THROW(p.string("s", "", 1), BadRequest);
  EXPECT_THROW(p.string("n", ""), BadRequest);
  EXPECT_TRUE(p.boolean("b", false));
  EXPECT_EQ(p.numbers("list", 2), (std::vector<double>{1, 2}));
  EXPECT_THROW(p.numbers("list", 1), BadRequest);
  EXPECT_EQ(p.choice("s", "", {"hi", "ho"}), "hi");
  EXPECT_THROW(p.choice("s", "", {"ho"}), BadRequest);
  // Query strings carry text: numbers and seeds parse from it.
  Params q(nlohmann::json{{"n", "12"}, {"seed", "18446744073709551615"}, {"bad", "12x"}});
  EXPECT_EQ(q.integer("n", 0, 0, 100), 12);
  EXPECT_EQ(q.seed("seed", 0), 18446744073709551615ull);
  EXPECT_THROW(q.integer("bad", 0, 0, 100), BadRequest);
}

TEST(StudioParams, RefusesWhatIsNotAJsonObject) {
  EXPECT_THROW(Params::parse("[1, 2]"), BadRequest);
  EXPECT_THROW(Params::parse("{\"a\": "), BadRequest);
  EXPECT_THROW(Params::parse("\xff\xfe"), BadRequest);
  EXPECT_THROW(Params::parse(R"({"n": 2721e308})"), BadRequest);  // nlohmann: out_of_range, not parse_error
  EXPECT_THROW(Params::parse(std::string(100, '[') + std::string(100, ']')), BadRequest);
  EXPECT_NO_THROW(Params::parse("  "));
}

TEST(StudioFrame, EncodesHeaderAndAlignedBuffers) {
  studio::Frame frame;
  frame.header["kind"] = "test";
  std::vector<float> f = {1.5f, -2.0f, 3.25f};
  std::vector<uint16_t> u = {1, 65535};
  frame.add("f", f);
  frame.add("u", u);
  auto decoded = studio_test::decodeFrame(frame.encode());
  EXPECT_EQ(decoded.header["kind"], "test");
  EXPECT_EQ(decoded.as<float>("f"), f);
  EXPECT_EQ(decoded.as<uint16_t>("u"), u);
  EXPECT_EQ(decoded.header["buffers"][1]["dtype"], "u16");
  EXPECT_EQ(decoded.header["buffers"][1]["count"], 2);
}

TEST(StudioErrors, MapExceptionsToStatusAndKind) {
  auto reply = studio::errorReply(ParseError({"model.l", 3, 7}, "unknown module 'Q'", "axiom: Q"));
  EXPECT_EQ(reply.status, 422);
  auto error = nlohmann::json::parse(reply.body)["error"];
  EXPECT_EQ(error["kind"], "parse");
  EXPECT_EQ(error["line"], 3);
  EXPECT_EQ(error["column"], 7);
  EXPECT_EQ(studio::errorReply(BadRequest("x")).status, 400);
  EXPECT_EQ(studio::errorReply(studio::Cancelled()).status, 409);
  EXPECT_EQ(studio::errorReply(studio::Busy("x")).status, 429);
  EXPECT_EQ(nlohmann::json::parse(studio::errorReply(ResourceError("x")).body)["error"]["kind"], "budget");
  EXPECT_EQ(studio::errorReply(std::runtime_error("x")).status, 500);
}

}  // namespace
}  // namespace procgen

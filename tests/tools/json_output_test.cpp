// The CLI's JSON writer (tools/procgen/json_output.hpp): output parses back
// with nlohmann-json to the same values, non-finite numbers become null, and
// the layout is the one the stats files have always had (hand-written here).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "json_output.hpp"

namespace procgen::cli {
namespace {

TEST(JsonOutput, NonFiniteNumbersAreNullAndTheTextParses) {
  Json j;
  j["nan"] = std::nan("");
  j["inf"] = std::numeric_limits<double>::infinity();
  j["minus_inf"] = -std::numeric_limits<float>::infinity();
  j["list"] = Json::array({1.5, std::nan(""), -0.25});
  const std::string text = formatJson(j);
  const nlohmann::json back = nlohmann::json::parse(text);  // throws on invalid JSON
  EXPECT_TRUE(back["nan"].is_null());
  EXPECT_TRUE(back["inf"].is_null());
  EXPECT_TRUE(back["minus_inf"].is_null());
  EXPECT_EQ(back["list"], nlohmann::json::parse("[1.5, null, -0.25]"));
}

TEST(JsonOutput, NumbersRoundTripAndStringsAreEscaped) {
  Json j;
  j["third"] = 1.0 / 3.0;
  j["float"] = 0.1f;  // widened to double exactly
  j["big"] = uint64_t{18446744073709551615u};
  j["neg"] = int64_t{-9007199254740993};
  j["text"] = std::string("a\"b\\c\n\x01");
  const nlohmann::json back = nlohmann::json::parse(formatJson(j));
  EXPECT_EQ(back["third"].get<double>(), 1.0 / 3.0);
  EXPECT_EQ(back["float"].get<double>(), double(0.1f));
  EXPECT_EQ(back["big"].get<uint64_t>(), uint64_t{18446744073709551615u});
  EXPECT_EQ(back["neg"].get<int64_t>(), int64_t{-9007199254740993});
  EXPECT_EQ(back["text"].get<std::string>(), "a\"b\\c\n\x01");
}

TEST(JsonOutput, LayoutExpandsTheTopAndArraysOfObjects) {
  Json flat;
  flat["a"] = 1;
  flat["b"] = "x";
  EXPECT_EQ(formatJson(flat), "{\"a\": 1, \"b\": \"x\"}\n");

  Json j;
  j["n"] = 2;
  j["bbox"] = Json::array({-1.0, 0.5, 2.0});
  j["items"] = Json::array({Json{{"k", 1}, {"box", Json::array({0, 1})}}, Json{{"k", 2}, {"box", nullptr}}});
  j["empty"] = Json::array();
  EXPECT_EQ(formatJson(j),
            "{\n"
            "  \"n\": 2,\n"
            "  \"bbox\": [-1, 0.5, 2],\n"
            "  \"items\": [\n"
            "    {\"k\": 1, \"box\": [0, 1]},\n"
            "    {\"k\": 2, \"box\": null}\n"
            "  ],\n"
            "  \"empty\": []\n"
            "}\n");
}

TEST(JsonOutput, BoundsAreSixNumbersAndZerosWhenEmpty) {
  Bounds b;
  EXPECT_EQ(formatJson(jsonBounds(b)), "[0, 0, 0, 0, 0, 0]\n");
  b.add(Vec3{1, -2, 3});
  b.add(Vec3{-1, 2, 0.5f});
  EXPECT_EQ(formatJson(jsonBounds(b)), "[-1, -2, 0.5, 1, 2, 3]\n");
}

}  // namespace
}  // namespace procgen::cli

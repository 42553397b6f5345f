// Strict integer options (cli.hpp, issue 16): the one parser every command's
// integer options go through, so "-1", 23 digits or "0x10" never reach
// CLI11's base-0 strtoll, and range messages stay short.
#include <string>

#include "cli.hpp"
#include "procgen/error.hpp"

namespace procgen::cli {
namespace {

/// A 64-bit integer of either sign, as sign and magnitude.
struct Wide {
  bool negative = false;
  uint64_t magnitude = 0;

  bool operator<(const Wide& o) const {
    if (negative != o.negative) return negative;
    return negative ? magnitude > o.magnitude : magnitude < o.magnitude;
  }
  std::string str() const { return (negative && magnitude ? "-" : "") + std::to_string(magnitude); }
};

std::string quotedArgument(const std::string& text) { return "'" + printableText(text, 40) + "'"; }

}  // namespace

CLI::Validator integerRange(bool min_negative, uint64_t min_magnitude, bool max_negative, uint64_t max_magnitude) {
  const Wide min{min_negative, min_magnitude}, max{max_negative, max_magnitude};
  auto check = [min, max](std::string& text) -> std::string {
    const std::string kind = min.negative ? "an integer" : "a non-negative integer";
    Wide value;
    size_t i = 0;
    if (!text.empty() && text[0] == '-') {
      value.negative = true;
      i = 1;
    }
    if (i == text.size()) return quotedArgument(text) + " is not " + kind;
    bool overflow = false;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (c < '0' || c > '9') return quotedArgument(text) + " is not " + kind;
      const uint64_t digit = static_cast<uint64_t>(c - '0');
      if (value.magnitude > (UINT64_MAX - digit) / 10) overflow = true;
      else value.magnitude = value.magnitude * 10 + digit;
    }
    if (value.negative && value.magnitude != 0 && !min.negative) return quotedArgument(text) + " is not " + kind;
    if (overflow || value < min || max < value)
      return printableText(text, 40) + " is out of range (" + min.str() + " to " + max.str() + ")";
    text = value.str();  // what CLI11 then converts: plain decimal, no leading zeros
    return {};
  };
  return CLI::Validator(check, "", "integer range");
}

}  // namespace procgen::cli

// The serial backend's pass runner: each stage over the whole string as one chunk.
#include "lsystem/pass_runner.hpp"

namespace procgen::detail {
namespace {

class SerialPassRunner final : public HostPassRunner {
 public:
  int threads() const override { return 1; }
  ChunkCount count(const RewritePass& pass, int32_t* choice) override {
    return countChunk(pass, 0, pass.in.length, choice);
  }
  void rewrite(const RewritePass& pass, const int32_t* choice, ModuleString& out) override {
    rewriteChunk(pass, 0, pass.in.length, choice, 0, 0, out);
  }
  uint64_t countD0L(const D0LTable& t, const uint8_t* symbols, uint64_t n) override {
    return countChunkD0L(t, symbols, 0, n);
  }
  void rewriteD0L(const D0LTable& t, const uint8_t* symbols, uint64_t n, uint8_t* out) override {
    rewriteChunkD0L(t, symbols, 0, n, out);
  }
  uint64_t countRewriteD0L(const D0LTable& t, const uint8_t* symbols, uint64_t n, uint8_t* out,
                           uint64_t /*expected_output*/) override {
    return rewriteChunkD0L(t, symbols, 0, n, out) - out;
  }
  void bracketPartners(const uint8_t* symbols, uint64_t n, int64_t* partner) override {
    bracketPartnersSerial(symbols, n, partner);
  }
};

}  // namespace

std::unique_ptr<HostPassRunner> makeSerialPassRunner() { return std::make_unique<SerialPassRunner>(); }

}  // namespace procgen::detail

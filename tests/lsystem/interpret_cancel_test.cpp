// InterpretOptions::keep_going (include/procgen/lsystem.hpp) on every backend:
// a run told to stop throws InterpretCancelled (not another error), returns
// nothing, stops asking once told, and leaves the backend able to run again
// with the same result; a run never told to stop is the run without the
// callback, bit for bit, and is asked between chunks as documented.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "common/backends.hpp"
#include "procgen/lsystem.hpp"

namespace procgen {
namespace {

struct CancelModel {
  const char* name;
  const char* text;
  int iterations;
};

// One model per interpretation path: non-branching (cpu: matrix accumulation),
// branching (the work queue), homomorphism (expanded on the fly).
const CancelModel kModels[] = {
    {"koch", "angle increment: 90\nAxiom: F\nF --> F+F-F-F+F\n", 8},                // 1.3 M modules
    {"plant", "angle increment: 22.5\nAxiom: F\nF --> FF-[-F+F+F]+[+F-F-F]\n", 6},  // 0.7 M modules
    {"homomorphism", "Axiom: A\nA --> AA\nhomomorphism\nA --> F+\n", 18},           // 262 k A's, 2 modules each
};

class InterpretCancel : public test::BackendTest {
 protected:
  struct Prepared {
    LSystem lsystem;
    ModuleString string;
    InterpretOptions options;
  };
  Prepared prepare(const CancelModel& m) const {
    Prepared p{LSystem::fromText(m.text), {}, {}};
    DeriveOptions d;
    d.iterations = m.iterations;
    d.execution = execution();
    p.string = derive(p.lsystem, d);
    p.options.view = p.lsystem.view();
    p.options.execution = execution();
    return p;
  }
};

void expectSameGeometry(const Geometry& a, const Geometry& b) {
  ASSERT_EQ(a.segments.size(), b.segments.size());
  for (size_t i = 0; i < a.segments.size(); ++i) {
    const Segment &x = a.segments[i], &y = b.segments[i];
    ASSERT_TRUE(x.start.x == y.start.x && x.start.y == y.start.y && x.start.z == y.start.z && x.end.x == y.end.x &&
                x.end.y == y.end.y && x.end.z == y.end.z && x.color == y.color && x.width == y.width)
        << "segment " << i;
  }
}

TEST_P(InterpretCancel, ARunToldToStopThrowsAndReturnsNothing) {
  for (const CancelModel& m : kModels) {
    SCOPED_TRACE(m.name);
    Prepared p = prepare(m);
    const Geometry reference = interpret(p.lsystem, p.string, p.options);
    ASSERT_GT(reference.segments.size(), 100000u);
    // Stops at the second question: after the run has started, before it ends.
    for (int answer_no_at : {1, 2}) {
      std::atomic<int> asked{0}, asked_after_no{0};
      p.options.keep_going = [&] {
        const int k = ++asked;
        if (k > answer_no_at) ++asked_after_no;
        return k < answer_no_at;
      };
      Geometry kept;
      kept.segments.push_back(Segment{});  // what the caller held stays as it was
      bool cancelled = false;
      try {
        kept = interpret(p.lsystem, p.string, p.options);
      } catch (const InterpretCancelled&) {
        cancelled = true;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "another exception: " << e.what();
      }
      EXPECT_TRUE(cancelled);
      EXPECT_EQ(kept.segments.size(), 1u);
      // Once told, the backend does not ask again (a latch), and stops; on
      // the cpu, workers that asked at the same moment may still get a no.
      EXPECT_LT(asked_after_no.load(), variant().threads);
    }
    // The backend (its cached OpenCL state, its arena) runs again as before.
    p.options.keep_going = nullptr;
    expectSameGeometry(interpret(p.lsystem, p.string, p.options), reference);
  }
}

TEST_P(InterpretCancel, ARunNeverToldToStopIsUnchangedAndAskedBetweenChunks) {
  for (const CancelModel& m : kModels) {
    SCOPED_TRACE(m.name);
    Prepared p = prepare(m);
    const Geometry reference = interpret(p.lsystem, p.string, p.options);
    std::atomic<uint64_t> asked{0};
    p.options.keep_going = [&] {
      ++asked;
      return true;
    };
    expectSameGeometry(interpret(p.lsystem, p.string, p.options), reference);
    // Serial and cpu ask at least once per 64 k modules walked; opencl between
    // kernel launches (the homomorphism levels, the count, the walk rounds).
    const uint64_t at_least = variant().backend == Backend::kOpenCL ? 2 : p.string.size() / (uint64_t{1} << 16);
    EXPECT_GE(asked.load(), at_least) << p.string.size() << " modules";
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, InterpretCancel, testing::ValuesIn(test::backendVariants()), test::variantName);

}  // namespace
}  // namespace procgen

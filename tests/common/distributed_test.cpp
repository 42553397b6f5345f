// procgen/distributed.hpp in a process not started by mpirun (the test
// binary): the identity of one rank — every collective returns this rank's
// own data, the file write writes the whole file — and blockOf's partition
// against hand-derived blocks. Several ranks are tested by ctest's mpi.*
// entries (tests/mpi/mpi_case.sh).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "procgen/distributed.hpp"

namespace procgen {
namespace {

TEST(Distributed, OutsideMpirunIsOneRank) {
  EXPECT_FALSE(distributed::active());
  EXPECT_EQ(distributed::rank(), 0);
  EXPECT_EQ(distributed::size(), 1);
  EXPECT_TRUE(distributed::isRoot());
  EXPECT_NO_THROW(distributed::checkpoint());
  EXPECT_NO_THROW(distributed::barrier());
  EXPECT_EQ(distributed::agreeOnExit(3), 3);
}

TEST(Distributed, CollectivesOfOneRankReturnTheirInput) {
  double d[2] = {1.5, -2};
  distributed::allReduce(std::span<double>(d, 2), distributed::ReduceOp::kSum);
  EXPECT_EQ(d[0], 1.5);
  EXPECT_EQ(d[1], -2);
  const std::vector<uint8_t> bytes = {1, 2, 3, 4, 5};
  std::vector<uint64_t> counts;
  EXPECT_EQ(distributed::gather(bytes, 0, &counts), bytes);
  EXPECT_EQ(counts, std::vector<uint64_t>{5});
  std::vector<uint64_t> received;
  const std::vector<uint64_t> offsets = {1, 4};
  EXPECT_EQ(distributed::allToAll(bytes, offsets, received), (std::vector<uint8_t>{2, 3, 4}));
  EXPECT_EQ(received, (std::vector<uint64_t>{0, 3}));
  EXPECT_THROW(distributed::allToAll(bytes, std::vector<uint64_t>{0, 2, 4}, received), Error);  // offsets for 2 ranks
  std::vector<uint8_t> state = {7};
  int steps = 0;
  distributed::chain(state, [&](std::vector<uint8_t>& s) {
    ++steps;
    s.push_back(8);
  });
  EXPECT_EQ(steps, 1);
  EXPECT_EQ(state, (std::vector<uint8_t>{7, 8}));
}

TEST(Distributed, OneRankWritesTheWholeFile) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "procgen_distributed_test.bin";
  const std::vector<uint8_t> bytes = {9, 8, 7, 6};
  distributed::writeFileAtOffsets(path.string(), 0, bytes, 4);
  std::ifstream in(path, std::ios::binary);
  EXPECT_EQ(std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {}), bytes);
  std::filesystem::remove(path);
  EXPECT_THROW(distributed::writeFileAtOffsets(path.string(), 2, bytes, 6), Error);  // not the whole file
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Distributed, OneRankExchangeDeliversMessagesToItselfInOrderPerTag) {
  distributed::Exchange exchange;
  exchange.startCheckpoint();  // nothing to agree with: no failure
  const std::vector<uint8_t> first = {1, 2, 3}, second = {4, 5}, other = {9};
  std::vector<uint8_t> a, b, c, empty = {7};
  auto into = [](std::vector<uint8_t>& v) {
    return [&v](uint64_t n) {
      v.resize(n);
      return v.data();
    };
  };
  // A receive started before its message, and messages before their receives.
  exchange.receive(0, 1, into(a), 0);
  exchange.send(0, 2, other, 0);
  exchange.send(0, 1, first, 0);
  exchange.send(0, 1, second, 0);
  exchange.send(0, 1, {}, 0);
  exchange.receive(0, 1, into(b), 0);
  exchange.receive(0, 2, into(c), 0);
  exchange.receive(0, 1, into(empty), 0);
  exchange.wait(0);
  exchange.finish();
  EXPECT_EQ(a, first);
  EXPECT_EQ(b, second);
  EXPECT_EQ(c, other);
  EXPECT_TRUE(empty.empty());
  EXPECT_THROW(exchange.send(1, 0, first, 0), Error);  // no rank 1
  EXPECT_THROW(exchange.receive(0, 40000, into(a), 0), Error);  // tag out of range
}

TEST(Distributed, OneRankRootGatherPlacesItsOwnArrays) {
  distributed::RootGather gather(3);
  EXPECT_THROW(gather.sizes(0), Error);  // before this rank's own send()
  const std::vector<uint8_t> a = {1, 2, 3, 4}, c = {9}, d = {7, 8};
  const std::span<const uint8_t> arrays[3] = {a, {}, c};
  EXPECT_THROW(gather.send(std::span(arrays, 2)), Error);  // every array
  gather.send(arrays);
  EXPECT_EQ(gather.sizes(0), (std::vector<uint64_t>{4, 0, 1}));
  EXPECT_THROW(gather.sizes(0, 1), Error);  // part 1 not sent yet
  const std::span<const uint8_t> second[3] = {{}, d, {}};
  gather.send(second);  // part 1
  EXPECT_EQ(gather.sizes(0, 1), (std::vector<uint64_t>{0, 2, 0}));
  EXPECT_EQ(gather.sizes(0), (std::vector<uint64_t>{4, 0, 1}));  // part 0 unchanged
  EXPECT_THROW(gather.sizes(1), Error);  // no rank 1
  std::vector<uint8_t> joined(9, 0);
  gather.receive(0, 2, joined.data() + 1);
  gather.receive(0, 1, joined.data() + 6);
  gather.receive(0, 0, joined.data() + 2);
  gather.receive(0, 1, 1, joined.data() + 7);  // part 1's array 1, after part 0's
  gather.finish();
  EXPECT_EQ(joined, (std::vector<uint8_t>{0, 9, 1, 2, 3, 4, 0, 7, 8}));
}

TEST(Distributed, OneRankSharedCounterHandsOutEveryItemOnce) {
  distributed::SharedCounter counter(5);
  for (uint64_t want = 0; want < 5; ++want) EXPECT_EQ(counter.next(), want);
  EXPECT_EQ(counter.next(), 5u);  // none left, and it stays so
  EXPECT_EQ(counter.next(), 5u);
  distributed::SharedCounter empty(0);
  EXPECT_EQ(empty.next(), 0u);
}

TEST(Distributed, BlocksPartitionContiguouslyLongestFirst) {
  // 10 items over 4 ranks by hand: 3, 3, 2, 2.
  const uint64_t want[4][2] = {{0, 3}, {3, 6}, {6, 8}, {8, 10}};
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(distributed::blockOf(10, r, 4).begin, want[r][0]) << r;
    EXPECT_EQ(distributed::blockOf(10, r, 4).end, want[r][1]) << r;
  }
  // 2 items over 3 ranks: the last rank's block is empty, at the end.
  EXPECT_EQ(distributed::blockOf(2, 2, 3).begin, 2u);
  EXPECT_EQ(distributed::blockOf(2, 2, 3).end, 2u);
  for (uint64_t n : {0u, 1u, 7u, 64u, 1001u})
    for (int ranks : {1, 2, 3, 5, 8}) {
      uint64_t next = 0;
      for (int r = 0; r < ranks; ++r) {
        const distributed::Block b = distributed::blockOf(n, r, ranks);
        EXPECT_EQ(b.begin, next);
        EXPECT_LE(b.end - b.begin, n / uint64_t(ranks) + 1);
        EXPECT_GE(b.end - b.begin, n / uint64_t(ranks));
        next = b.end;
      }
      EXPECT_EQ(next, n);
    }
}

}  // namespace
}  // namespace procgen

// helpers/recycle.h: a released block is the next one its releasing thread takes, whichever thread took
// it first; a thread's list is bounded.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "helpers/recycle.h"

using namespace tg;

namespace {

// A size no other type in the library has, so the library's own blocks never share these lists.
struct Payload {
  char bytes[1000];
  int id = 0;
  explicit Payload(int i) : id(i) {}
};

// Takes from malloc one block of each size near a Payload's, and gives them back when it goes: a block
// that went back to malloc (rather than to a free list) is then in use here, so a test can tell the two.
struct MallocBlocksNearby {
  std::vector<void*> blocks;
  MallocBlocksNearby() {
    for (size_t size = sizeof(Payload) - 64; size <= sizeof(Payload) + 256; size += 8) blocks.push_back(::operator new(size));
  }
  ~MallocBlocksNearby() {
    for (void* p : blocks) ::operator delete(p);
  }
};

#define SKIP_WITHOUT_RECYCLING() \
  if (!recycle::kRecycle) GTEST_SKIP() << "blocks are not recycled under AddressSanitizer"

}  // namespace

TEST(Recycle, ReleasedBlockIsTakenNextOnTheSameThread) {
  SKIP_WITHOUT_RECYCLING();
  auto a = make_recycled<Payload>(1);
  const void* where = a.get();
  a.reset();
  MallocBlocksNearby others;  // would take the block had it gone back to malloc
  auto b = make_recycled<Payload>(2);
  EXPECT_EQ(b.get(), where);
  EXPECT_EQ(b->id, 2);  // constructed again, not the old object
}

TEST(Recycle, BlockReleasedByAnotherThreadJoinsThatThreadsList) {
  SKIP_WITHOUT_RECYCLING();
  auto a = make_recycled<Payload>(1);
  const void* where = a.get();
  const void* taken_there = nullptr;
  std::thread([&] {
    a.reset();  // released here: joins this thread's list
    MallocBlocksNearby others;
    auto c = make_recycled<Payload>(3);
    taken_there = c.get();
  }).join();
  EXPECT_EQ(taken_there, where);
}

TEST(Recycle, ListKeepsAtMostMaxFreeBlocks) {
  SKIP_WITHOUT_RECYCLING();
  // a fresh thread: its list starts empty
  std::thread([] {
    std::vector<std::shared_ptr<Payload>> held;
    for (size_t i = 0; i < recycle::kMaxFree + 8; i++) held.push_back(make_recycled<Payload>(static_cast<int>(i)));
    std::vector<const void*> kept;
    for (auto& p : held) kept.push_back(p.get());
    for (auto& p : held) p.reset();  // the first kMaxFree are kept, the last 8 deleted
    // the list hands its blocks back last-in first-out: all kMaxFree kept blocks, and only those
    std::vector<std::shared_ptr<Payload>> again;
    for (size_t i = 0; i < recycle::kMaxFree; i++) again.push_back(make_recycled<Payload>(0));
    for (size_t i = 0; i < recycle::kMaxFree; i++) EXPECT_EQ(again[i].get(), kept[recycle::kMaxFree - 1 - i]) << i;
  }).join();
}

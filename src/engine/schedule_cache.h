// The schedule cache: create_schedule's result for a lazy graph of the same structure as one scheduled
// before, without grouping or building ASTs again (an eager training loop or a small op called in a
// loop builds the same graph every step, over new buffers).
//
// The key is the graph behind the outputs written out flat, one record per LazyBuffer down to the
// realized ones (sources first), carrying everything the scheduler reads of it: op, dtype, arg, device,
// ShapeTracker, its sources' positions, whether it is realized or forced to be, and which Buffer it has,
// numbered by first appearance (so two graphs match only when they share Buffers in the same pattern),
// plus the FUSE setting. Keys match when their records are equal, word for word and arg for arg;
// nothing is matched by hash alone. A cached schedule refers to LazyBuffers and Buffers by their
// position in the key's walk and is filled in with the new graph's.
//
// SCHEDULE_CACHE=0 turns it off; SCHEDULE_CACHE=2 also schedules every hit from scratch and raises an
// InternalError unless the two schedules are the same (the tests' and fuzzers' check of the key).
// The cache holds at most 1024 schedules of 2^17 key nodes in all; when full it starts over.
#pragma once
#include <optional>
#include <vector>

#include "engine/schedule.h"
#include "tg/helpers.h"

namespace tg {

inline ContextVar SCHEDULE_CACHE{"SCHEDULE_CACHE", 1};

// A graph's key and its LazyBuffers in the key's order. Valid while the graph lives (args points
// into it); an empty key (no words) is one the cache does not take.
// A key's vectors go back to its thread when it is dropped, and the thread's next key reuses them: an
// eager loop keys a graph per op, which would otherwise allocate (and free) three vectors each time.
struct ScheduleKey {
  std::vector<uint64_t> words;      // the records: plain values, compared as they are
  std::vector<const Arg*> args;     // the args of the nodes that have one, compared with arg_equal
  uint64_t hash = 0;                // of words and args
  std::vector<LazyBuffer*> nodes;
  size_t forced = 0;                // nodes forced to realize when the key was made

  ScheduleKey() = default;
  ScheduleKey(ScheduleKey&&) = default;
  ScheduleKey& operator=(ScheduleKey&&) = default;
  ~ScheduleKey();
};
ScheduleKey schedule_key(const std::vector<LBPtr>& outs);
// Whether k still describes its graph. The one thing of a graph that changes outside the realize lock
// is a forced-realize hint (another thread's contiguous() sets it; nothing clears it), so a key stays
// current while no more of its nodes are forced than when it was made.
bool key_is_current(const ScheduleKey& k);

// The cached schedule for `k`'s structure, over k's LazyBuffers and Buffers; nullopt on a miss.
std::optional<std::vector<ScheduleItem>> cached_schedule(const ScheduleKey& k);
// Remembers `schedule` (made for k's graph) for graphs of k's structure. A schedule that refers to a
// LazyBuffer or Buffer outside the key's graph is not cached.
void cache_schedule(const ScheduleKey& k, const std::vector<ScheduleItem>& schedule);
size_t schedule_cache_size();

}  // namespace tg

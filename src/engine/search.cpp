#include "engine/search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <limits>
#include <set>
#include <sstream>

#include "engine/realize.h"
#include "tg/error.h"
#include "tg/helpers.h"

namespace tg {

namespace {

std::atomic<int64_t> searches{0};

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Candidate {
  Kernel k;
  double time = std::numeric_limits<double>::infinity();
};

// A round's winner was timed a few times beside many others, so on a noisy machine it may only have
// been lucky. The finalists (the heuristic's kernel and each round's winner) are timed again, in turns
// so that a slow spell of the machine hits them all alike, and the fastest best time wins.
Kernel final_choice(const std::vector<Kernel>& candidates, const std::string& device, const std::vector<Buffer*>& bufs) {
  std::vector<Kernel> finalists;
  std::set<std::string> seen;
  for (const Kernel& k : candidates)
    if (seen.insert(opts_to_string(k.applied_opts())).second) finalists.push_back(k);
  std::vector<std::shared_ptr<CompiledRunner>> runners;
  for (const Kernel& k : finalists) {
    try { runners.push_back(compile_kernel(k, device)); } catch (const KernelOptError&) { runners.push_back(nullptr); }
  }
  std::vector<double> best(finalists.size(), std::numeric_limits<double>::infinity());
  const int turns = 7;
  for (int t = 0; t < turns; t++)
    for (size_t i = 0; i < runners.size(); i++)
      if (runners[i]) best[i] = std::min(best[i], runners[i]->exec(bufs, {}, true));
  size_t w = static_cast<size_t>(std::min_element(best.begin(), best.end()) - best.begin());
  if (DEBUG >= 2)
    for (size_t i = 0; i < finalists.size(); i++)
      std::printf("BEAM final %s: %.2f us with [%s]%s\n", finalists[i].name().c_str(), best[i] * 1e6,
                  opts_to_string(finalists[i].applied_opts()).c_str(), i == w ? " (chosen)" : "");
  return finalists[w];
}

}  // namespace

// The actions tried on every kernel of the beam (seed 001's list, with the CPU's vector widths, and our
// reduce cache blocks).
std::vector<Opt> beam_actions() {
  std::vector<Opt> a;
  for (int axis = 0; axis < 5; axis++)
    for (int64_t amt : {0, 2, 3, 4, 8, 16}) a.push_back({OptOps::UPCAST, axis, amt});
  for (int axis = 0; axis < 3; axis++)
    for (int64_t amt : {0, 2, 4, 8, 16}) a.push_back({OptOps::UNROLL, axis, amt});
  for (int axis = 0; axis < 3; axis++) a.push_back({OptOps::PADTO, axis, 16});
  for (int axis = 0; axis < 2; axis++)
    for (int64_t other = axis + 1; other < 3; other++) a.push_back({OptOps::SWAP, axis, other});
  for (int64_t amt : {16, 32, 64, 128}) a.push_back({OptOps::BLOCK, 0, amt});
  return a;
}

int64_t beam_searches_run() { return searches.load(); }

std::string opts_to_string(const std::vector<Opt>& opts) {
  std::string s;
  for (const Opt& o : opts) s += std::string(s.empty() ? "" : ";") + optops_name(o.op) + " " + std::to_string(o.axis) + " " + std::to_string(o.amount);
  return s;
}

std::vector<Opt> opts_from_string(const std::string& s) {
  std::vector<Opt> out;
  std::istringstream is(s);
  for (std::string item; std::getline(is, item, ';');) {
    std::istringstream it(item);
    std::string name;
    Opt o{OptOps::UPCAST, 0, 0};
    it >> name >> o.axis >> o.amount;
    bool known = false;
    for (OptOps op : {OptOps::UPCAST, OptOps::UNROLL, OptOps::LOCAL, OptOps::GROUP, OptOps::GROUPTOP, OptOps::PADTO, OptOps::NOLOCALS,
                      OptOps::SWAP, OptOps::BLOCK})
      if (name == optops_name(op)) { o.op = op; known = true; }
    TG_CHECK(known && !it.fail(), "BEAM: a cached search result is corrupt: '", s, "'");
    out.push_back(o);
  }
  return out;
}

std::vector<Opt> beam_search(const Kernel& k0, const std::string& device, const std::vector<Buffer*>& bufs, size_t n_outputs, int width) {
  Compiled& dev = Device::get(device);
  // the actions and the heuristic's starting point are part of the key: a search by an older optimizer
  // (other actions, another starting kernel) is not reused
  Kernel heuristic = k0;
  heuristic.hand_coded_optimizations();
  std::string key = "beam " + std::to_string(width) + " " + device + "\n" + opts_to_string(beam_actions()) + "\n" +
                    opts_to_string(heuristic.applied_opts()) + "\n" + k0.ast()->str();
  std::string found = dev.compiler().cached(key, [&]() -> std::string {
    searches++;
    double limit = getenv("BEAM_TIME_LIMIT", 60), start = now();
    // scratch outputs, so a candidate never writes a buffer that another one (or the graph) reads
    std::vector<std::unique_ptr<Buffer>> scratch;
    std::vector<Buffer*> run_bufs = bufs;
    for (size_t i = 0; i < n_outputs; i++) {
      scratch.push_back(std::make_unique<Buffer>(device, bufs[i]->size, bufs[i]->dtype));
      scratch.back()->allocate();
      run_bufs[i] = scratch.back().get();
    }
    auto build = [&device](const Kernel& k) -> std::shared_ptr<CompiledRunner> {
      try { return compile_kernel(k, device); } catch (const KernelOptError&) { return nullptr; }  // an invalid candidate is skipped; a compiler error is a bug and propagates
    };
    // the best of 3 runs; fewer when it is far slower than the best: no need to time it well
    auto time_of = [&](const std::shared_ptr<CompiledRunner>& r, double best) {
      double t = std::numeric_limits<double>::infinity();
      for (int i = 0; r && i < 3 && (i == 0 || t <= 10 * best); i++) t = std::min(t, r->exec(run_bufs, {}, true));
      return t;
    };
    std::vector<Candidate> beam;
    beam.push_back({k0});
    if (!heuristic.applied_opts().empty()) beam.push_back({heuristic});
    double best = std::numeric_limits<double>::infinity();
    for (auto& c : beam) best = std::min(best, c.time = time_of(build(c.k), best));
    std::set<std::string> seen;
    for (auto& c : beam) seen.insert(opts_to_string(c.k.applied_opts()));
    Candidate winner = *std::min_element(beam.begin(), beam.end(), [](auto& a, auto& b) { return a.time < b.time; });
    std::vector<Kernel> finalists{heuristic, winner.k};  // the start and each round's winner
    while (now() - start < limit) {
      std::vector<Kernel> next;
      for (auto& c : beam)
        for (const Opt& a : beam_actions()) {
          Kernel k = c.k;
          try { k.apply_opt(a); } catch (const KernelOptError&) { continue; }
          if (seen.insert(opts_to_string(k.applied_opts())).second) next.push_back(std::move(k));
        }
      if (next.empty()) break;
      // compile two at a time (the compiler is a separate process), then time them one by one once
      // both compiles are done: a compiler running beside a timed kernel takes one of its cores
      std::vector<Candidate> timed;
      const size_t jobs = 2;
      for (size_t i = 0; i < next.size() && now() - start < limit; i += jobs) {
        std::vector<std::future<std::shared_ptr<CompiledRunner>>> batch;
        for (size_t j = i; j < std::min(next.size(), i + jobs); j++)
          batch.push_back(std::async(std::launch::async, build, std::cref(next[j])));
        std::vector<std::shared_ptr<CompiledRunner>> built;
        for (auto& f : batch) built.push_back(f.get());
        for (size_t j = 0; j < built.size(); j++)
          if (built[j]) timed.push_back({next[i + j], time_of(built[j], best)});
      }
      if (timed.empty()) break;
      std::sort(timed.begin(), timed.end(), [](auto& a, auto& b) { return a.time < b.time; });
      if (timed[0].time >= winner.time) break;  // no progress this round
      winner = timed[0];
      best = winner.time;
      finalists.push_back(winner.k);
      timed.erase(timed.begin() + static_cast<long>(std::min(timed.size(), static_cast<size_t>(width))), timed.end());
      beam = std::move(timed);
      if (DEBUG >= 2)
        std::printf("BEAM %s: %.2f us with [%s] after %.1f s\n", k0.name().c_str(), winner.time * 1e6,
                    opts_to_string(winner.k.applied_opts()).c_str(), now() - start);
    }
    return opts_to_string(final_choice(finalists, device, run_bufs).applied_opts());
  });
  return opts_from_string(found);
}

}  // namespace tg

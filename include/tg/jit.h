// TinyJit (seed 003): run a function of Tensors once normally, capture the kernels its second call runs,
// and from the third call on replay them with the new inputs swapped in: no scheduling, lowering or
// compiling, and on the CPU one batched dispatch of the whole captured graph.
//
//   tg::TinyJit step([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{train(in[0], in[1])}; });
//   for (...) Tensor loss = step({x, y})[0];
//
// What a replay does, and where tinygrad is silently wrong:
// - Inputs are the Tensor arguments, realized first. Each replay swaps their buffers in; their shapes,
//   views, dtypes and devices must be the capture's.
// - Outputs come in fresh buffers every call: a tensor returned by one call keeps its values after the
//   next (tinygrad reuses the buffer). An output that is an input, or a tensor that outlives the call
//   (a parameter), is that tensor.
// - State updated with assign (optimizer parameters and moments, BatchNorm running stats, an input the
//   function writes) is updated in place on every replay: the plan writes the same Buffers.
// - Random numbers advance on every replay, as without the JIT.
// - Buffers that only live inside the function share memory where their lifetimes do not overlap.
// - What cannot be replayed is a JitError (a tg::Error; RuntimeError in Python) naming the function and
//   the argument: inputs that differ from the capture, a function that realizes nothing, a TinyJit
//   inside another's capture, item()/tolist()/bytes() during the capture (the value would be baked in),
//   one buffer passed as two inputs, an unrealized constant (no buffer) as an input.
// As with any tracing JIT, host control flow and host values inside the function are those of the
// capture. JIT=0 turns capture off (every call runs the function); JIT=2 replays kernel by kernel instead
// of through the device's graph executor (as tinygrad). DEBUG>=1 prints what was captured.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tg/tensor.h"

namespace tg {

class TinyJit {
 public:
  using Function = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  explicit TinyJit(Function fn, std::string name = "TinyJit");
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);

  int cnt() const;                  // calls so far (0: warm-up next, 1: capture next, 2+: replays)
  size_t captured_kernels() const;  // kernels in the plan (0 before the capture)
  size_t graph_calls() const;       // device graph calls a replay makes for them (the rest run one by one)
  int64_t planned_bytes() const;    // memory of the buffers the plan owns, after sharing
  int64_t unplanned_bytes() const;  // the same buffers before sharing: what they took during the capture
  void reset();                     // forget the capture: the next call is a warm-up again

 private:
  struct State;
  std::shared_ptr<State> s_;
};

}  // namespace tg

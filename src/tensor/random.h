// The device random generator's raw bits, for tests and for the random creation ops. Not a public header.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

#include "tg/tensor.h"

namespace tg::detail {

// Random123's threefry2x32 block cipher with 20 rounds: encrypts the counter words (x0, x1) under the
// key (k0, k1). All four are uint32 tensors broadcast to one shape; returns the two output words.
std::pair<Tensor, Tensor> threefry2x32(const Tensor& x0, const Tensor& x1, const Tensor& k0, const Tensor& k1);

// The next `numel` uint32 words of the generator (keyed by manual_seed, one counter block per call).
Tensor random_bits(int64_t numel, const std::string& device);

}  // namespace tg::detail

// torch_load's result before it is flattened into names: the object the file's pickle describes, as
// pickle values (nn/pickle.h) whose tensors are PickleValue::Kind::Object values with s == "tensor" and
// i an index into `tensors`. The Python module turns it into Python objects (dicts, lists, tg Tensors).
// Not a public header.
#pragma once
#include <string>
#include <vector>

#include "nn/pickle.h"
#include "tg/tensor.h"

namespace tg::nn::detail {

struct TorchFile {
  std::vector<PickleValue> values;
  size_t root = 0;
  std::vector<Tensor> tensors;
};

TorchFile torch_load_file(const std::string& path);

}  // namespace tg::nn::detail

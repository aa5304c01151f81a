// tg::nn::state: tinygrad's nn/state.py. A model's tensors by name, loading them back, and the two file
// formats weights travel in: safetensors (https://github.com/huggingface/safetensors) and NumPy's .npy.
//
// Loaders check everything they read against the file's size before reading it: a truncated or
// malformed file is a tg::Error naming the file and the problem, never a read out of bounds.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "tg/nn.h"
#include "tg/tensor.h"

namespace tg::nn::state {

// Every tensor of the module (parameters and state such as running stats), as tinygrad's get_parameters.
std::vector<Tensor> get_parameters(const Module& m);
std::map<std::string, Tensor> get_state_dict(const Module& m);
// Copies state[name] into the module's tensor of that name (in place: every handle sees the new data),
// casting to the module tensor's dtype and moving it to its device, then realizes them all. With strict
// (as PyTorch), a name the module has but `state` lacks and a name `state` has but the module lacks are
// tg::Errors; without, those are skipped. A shape mismatch is always an error naming the tensor and both
// shapes. Nothing is changed unless every check passes.
void load_state_dict(Module& m, const std::map<std::string, Tensor>& state, bool strict = true);

// safetensors: 8-byte little-endian header length, a JSON header {name: {dtype, shape, data_offsets}}
// with an optional "__metadata__" string map, then the data. Dtypes BOOL, U8, I8, U16, I16, U32, I32,
// U64, I64, F16, F32, F64 load as themselves; BF16 loads as float32 (tg has no bfloat16).
std::map<std::string, Tensor> safe_load(const std::string& path);
std::map<std::string, std::string> safe_load_metadata(const std::string& path);
void safe_save(const std::map<std::string, Tensor>& tensors, const std::string& path,
               const std::map<std::string, std::string>& metadata = {});
inline std::map<std::string, Tensor> safetensors_load(const std::string& path) { return safe_load(path); }
inline void safetensors_save(const std::map<std::string, Tensor>& tensors, const std::string& path,
                             const std::map<std::string, std::string>& metadata = {}) {
  safe_save(tensors, path, metadata);
}

// PyTorch's torch.save files (.pth, .pt): the zip archive of torch >= 1.6 and the legacy format
// (_use_new_zipfile_serialization=False). The pickle inside is read by our own reader of the subset torch
// writes, which runs nothing: a file that names any other function or class (a pickled nn.Module, or a
// malicious pickle) and a truncated or malformed file are tg::Errors naming the file and the problem.
// Every tensor of the saved object is returned by its dotted name (a state dict's own keys; a nested dict
// or list adds "outer." / "0." prefixes); other values (ints, strings) are skipped. float, double, half,
// long, int, short, char (int8), byte (uint8) and bool storages load as themselves, bfloat16 as float32;
// strided tensors are read in C order. Tensors are put on the default device.
std::map<std::string, Tensor> torch_load(const std::string& path);

// NumPy .npy (format 1.0, 2.0 and 3.0 headers): little-endian or byte-order-free scalar dtypes
// (<f2 <f4 <f8 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8 |b1) in C order. fortran_order=True, big-endian and
// structured dtypes are tg::Errors. Saving writes format 1.0 (2.0 when the header needs it).
Tensor npy_load(const std::string& path);
void npy_save(const Tensor& t, const std::string& path);

}  // namespace tg::nn::state

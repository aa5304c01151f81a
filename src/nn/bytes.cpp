// Checked file reads and writes, for safetensors and .npy.
#include "nn/bytes.h"

#include <bit>

namespace tg::nn::detail {

static_assert(std::endian::native == std::endian::little, "weight files are little-endian: a big-endian host needs byte swaps");

int64_t checked_nbytes(const Shape& shape, int64_t itemsize) {
  int64_t n = itemsize;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  return n;
}

InFile::InFile(const std::string& path, const char* what) : path_(path), what_(what), f_(path, std::ios::binary) {
  TG_CHECK_AS(IOError, f_.is_open(), what, ": cannot open ", path);
  f_.seekg(0, std::ios::end);
  std::streamoff end = f_.tellg();
  TG_CHECK(f_ && end >= 0, what, ": cannot read the size of ", path);
  size_ = static_cast<uint64_t>(end);
}

void InFile::read_at(uint64_t offset, void* out, uint64_t n, const std::string& context) {
  TG_CHECK(offset <= size_ && n <= size_ - offset, what_, ": ", path_, " is truncated: ", context, " needs bytes [", offset, ", ",
           offset + n, ") but the file has ", size_);
  if (n == 0) return;
  f_.seekg(static_cast<std::streamoff>(offset));
  f_.read(static_cast<char*>(out), static_cast<std::streamsize>(n));
  TG_CHECK(f_ && static_cast<uint64_t>(f_.gcount()) == n, what_, ": read error in ", path_, " (", context, ")");
}

OutFile::OutFile(const std::string& path, const char* what) : path_(path), what_(what), f_(path, std::ios::binary | std::ios::trunc) {
  TG_CHECK_AS(IOError, f_.is_open(), what, ": cannot open ", path, " for writing");
}

void OutFile::write(const void* data, size_t n) {
  f_.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
  TG_CHECK(f_.good(), what_, ": write error on ", path_);
}

void OutFile::close() {
  f_.close();
  TG_CHECK(!f_.fail(), what_, ": write error on ", path_);
}

}  // namespace tg::nn::detail

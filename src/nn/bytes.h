// Checked file reads and writes, for the weight file formats. Not a public header.
#pragma once
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "tg/tensor.h"

namespace tg::nn::detail {

// numel(shape) * itemsize, or -1 when a dim is negative or the product overflows int64.
int64_t checked_nbytes(const Shape& shape, int64_t itemsize);

// A file opened for reading whose every read is checked against its size.
class InFile {
 public:
  InFile(const std::string& path, const char* what);
  uint64_t size() const { return size_; }
  // Reads n bytes at offset; a range past the end of the file is a tg::Error mentioning `context`.
  void read_at(uint64_t offset, void* out, uint64_t n, const std::string& context);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const char* what_;
  std::ifstream f_;
  uint64_t size_ = 0;
};

// A file written piece by piece (so a model is never held twice in memory); errors are tg::Errors.
class OutFile {
 public:
  OutFile(const std::string& path, const char* what);
  void write(const void* data, size_t n);
  void write(const std::vector<uint8_t>& bytes) { write(bytes.data(), bytes.size()); }
  void write(const std::string& s) { write(s.data(), s.size()); }
  void close();  // flushes; a failure is reported here

 private:
  std::string path_;
  const char* what_;
  std::ofstream f_;
};

}  // namespace tg::nn::detail

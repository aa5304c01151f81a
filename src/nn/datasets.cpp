#include "tg/datasets.h"

#include <zlib.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace tg::nn::datasets {

namespace {
// The whole file, gunzipped when it is gzip (gzread passes plain files through unchanged).
std::vector<uint8_t> read_maybe_gzip(const std::string& path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> f(gzopen(path.c_str(), "rb"), gzclose);
  TG_CHECK_AS(IOError, f, "load_idx: cannot open ", path);
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  int n;
  while ((n = gzread(f.get(), buf, sizeof(buf))) > 0) out.insert(out.end(), buf, buf + n);
  int err = 0;
  const char* msg = gzerror(f.get(), &err);
  TG_CHECK(n == 0 && (err == Z_OK || err == Z_STREAM_END), "load_idx: cannot read ", path, ": ", msg);
  return out;
}
uint32_t be32(const uint8_t* p) { return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3]; }
}  // namespace

Tensor load_idx(const std::string& path, const std::string& device) {
  std::vector<uint8_t> data = read_maybe_gzip(path);
  // magic: two zero bytes, the element type (0x08 = unsigned byte), the number of dims
  TG_CHECK(data.size() >= 4 && data[0] == 0 && data[1] == 0, "load_idx: ", path, " is not an idx file");
  TG_CHECK(data[2] == 0x08, "load_idx: ", path, ": only unsigned byte data (type 0x08) is supported, got type ", int{data[2]});
  size_t ndim = data[3];
  TG_CHECK(data.size() >= 4 + 4 * ndim, "load_idx: ", path, ": truncated header");
  Shape shape;
  uint64_t n = 1;
  for (size_t i = 0; i < ndim; i++) {
    shape.push_back(be32(&data[4 + 4 * i]));
    n *= static_cast<uint64_t>(shape.back());
    TG_CHECK(n <= data.size(), "load_idx: ", path, ": shape ", shape, " is larger than the file");
  }
  size_t off = 4 + 4 * ndim;
  TG_CHECK(data.size() - off == n, "load_idx: ", path, ": shape ", shape, " needs ", n, " bytes, file has ", data.size() - off);
  return Tensor::from_host(data.data() + off, n, shape, dtypes::uint8, device);
}

MNISTLike fashion_mnist(const std::string& dir, const std::string& device) {
  auto find = [&](const std::string& name) {
    std::string gz = dir + "/" + name + ".gz";
    std::unique_ptr<FILE, int (*)(FILE*)> f(fopen(gz.c_str(), "rb"), fclose);
    return f ? gz : dir + "/" + name;
  };
  MNISTLike d{load_idx(find("train-images-idx3-ubyte"), device).reshape({-1, 1, 28, 28}),
              load_idx(find("train-labels-idx1-ubyte"), device).cast(dtypes::int32),
              load_idx(find("t10k-images-idx3-ubyte"), device).reshape({-1, 1, 28, 28}),
              load_idx(find("t10k-labels-idx1-ubyte"), device).cast(dtypes::int32)};
  TG_CHECK(d.X_train.shape()[0] == d.Y_train.shape()[0] && d.X_test.shape()[0] == d.Y_test.shape()[0],
           "fashion_mnist: image and label counts differ in ", dir);
  return d;
}

}  // namespace tg::nn::datasets

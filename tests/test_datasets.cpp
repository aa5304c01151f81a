// Fashion-MNIST loading, checked against Python's gzip + struct reading of the same files.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <tg/datasets.h>
#include <tg/tg.h>

namespace {
const char* kDir = "/usr/share/datasets/fashion-mnist";

std::string python(const std::string& code) {
  std::string cmd = "/usr/bin/python3 -c \"" + code + "\"";
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  char buf[256];
  while (p && fgets(buf, sizeof(buf), p.get())) out += buf;
  return out;
}
}  // namespace

TEST(Datasets, FashionMnistMatchesPython) {
  auto d = tg::nn::datasets::fashion_mnist(kDir);
  EXPECT_EQ(d.X_train.shape(), (tg::Shape{60000, 1, 28, 28}));
  EXPECT_EQ(d.Y_train.shape(), (tg::Shape{60000}));
  EXPECT_EQ(d.X_test.shape(), (tg::Shape{10000, 1, 28, 28}));
  EXPECT_EQ(d.X_train.dtype(), tg::dtypes::uint8);
  EXPECT_EQ(d.Y_train.dtype(), tg::dtypes::int32);
  // independent reference: Python reads the gzip files itself
  std::string ref = python(
      "import gzip; x=gzip.open('" + std::string(kDir) + "/train-images-idx3-ubyte.gz').read()[16:]; "
      "y=gzip.open('" + std::string(kDir) + "/train-labels-idx1-ubyte.gz').read()[8:]; "
      "print(sum(x[:784]), sum(x[-784:]), y[0], y[-1], sum(y))");
  int64_t first, last, y0, ylast, ysum;
  ASSERT_EQ(std::sscanf(ref.c_str(), "%ld %ld %ld %ld %ld", &first, &last, &y0, &ylast, &ysum), 5) << ref;
  EXPECT_EQ(d.X_train.shrink({{0, 1}, {0, 1}, {0, 28}, {0, 28}}).sum().item<int64_t>(), first);
  EXPECT_EQ(d.X_train.shrink({{59999, 60000}, {0, 1}, {0, 28}, {0, 28}}).sum().item<int64_t>(), last);
  auto y = d.Y_train.tolist<int32_t>();
  EXPECT_EQ(y.front(), y0);
  EXPECT_EQ(y.back(), ylast);
  EXPECT_EQ(d.Y_train.sum().item<int64_t>(), ysum);
}

TEST(Datasets, BadFilesAreErrors) {
  EXPECT_THROW(tg::nn::datasets::load_idx("/nonexistent/file"), tg::Error);
  EXPECT_THROW(tg::nn::datasets::fashion_mnist("/nonexistent"), tg::Error);
  auto path = std::filesystem::temp_directory_path() / "tg_bad_idx";
  auto write = [&](const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; };
  write(std::string("\x00\x00\x08\x01\x00\x00\x00\x05" "abc", 11));  // says 5 bytes, has 3
  EXPECT_THROW(tg::nn::datasets::load_idx(path), tg::Error);
  write(std::string("\x00\x00\x0d\x01\x00\x00\x00\x01" "abcd", 12));  // float data: unsupported
  EXPECT_THROW(tg::nn::datasets::load_idx(path), tg::Error);
  write(std::string("\x00\x00\x08\x02\x00\x01", 6));  // truncated header
  EXPECT_THROW(tg::nn::datasets::load_idx(path), tg::Error);
  write(std::string("\x00\x00\x08\x01\x00\x00\x00\x03" "abc", 11));
  EXPECT_EQ(tg::nn::datasets::load_idx(path).tolist<uint8_t>(), (std::vector<uint8_t>{'a', 'b', 'c'}));
  std::filesystem::remove(path);
}

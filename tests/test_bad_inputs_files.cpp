// Bad-input catalogue: corrupt weight and dataset files (.npy, safetensors, idx) are a tg::Error naming the
// loader, checked against the file's size before anything is allocated; valid files load their values.
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "bad_inputs.h"
#include "tg/datasets.h"

using namespace tg;
using namespace bad_inputs;
namespace st = tg::nn::state;

namespace {

// A file under a fresh name in the test temp dir, holding `bytes`; removed when the test is done with it.
struct TempFile {
  std::string path;
  explicit TempFile(std::string p) : path(std::move(p)) {}
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { std::remove(path.c_str()); }
  operator const std::string&() const { return path; }
};
TempFile write_file(const std::string& name, const std::string& bytes) {
  std::string p = ::testing::TempDir() + "tg_bad_inputs_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(p, std::ios::binary) << bytes;
  return TempFile(p);
}

std::string le(uint64_t v, int n) {  // n little-endian bytes
  std::string s;
  for (int i = 0; i < n; i++) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

std::string npy(const std::string& header, const std::string& data, char major = 1) {
  return std::string("\x93NUMPY") + major + '\0' + le(header.size(), major == 1 ? 2 : 4) + header + data;
}
const std::string kF32Pair = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
std::string f32_bytes(std::vector<float> v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4); }

std::string safetensors(const std::string& json, const std::string& data) { return le(json.size(), 8) + json + data; }

std::string idx(std::vector<uint32_t> dims, const std::string& data, uint8_t type = 0x08) {
  std::string s{'\0', '\0', static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims) s += {static_cast<char>(d >> 24), static_cast<char>(d >> 16), static_cast<char>(d >> 8), static_cast<char>(d)};
  return s + data;
}

}  // namespace

// ---- .npy ----
TEST(BadInputsFiles, NpyHeaderClaims2GB) {  // 20 bytes claiming a 2 GB header: rejected before allocating it
  TempFile p = write_file("huge_header.npy", std::string("\x93NUMPY\x02") + '\0' + le(0x80000000u, 4) + "{'descr'");
  expect_user_error([&] { (void)st::npy_load(p); }, "npy_load", {"header length 2147483648", "20 bytes"});
}
TEST(BadInputsFiles, NpyBadMagic) {
  TempFile p = write_file("magic.npy", "PK\x03\x04 not npy at all");
  expect_user_error([&] { (void)st::npy_load(p); }, "npy_load", {"magic"});
}
TEST(BadInputsFiles, NpyTruncatedData) {
  TempFile p = write_file("short.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }", f32_bytes({1, 2})));
  expect_user_error([&] { (void)st::npy_load(p); }, "npy_load", {"(10,)", "40"});
}
TEST(BadInputsFiles, NpyShapeOverflow) {
  TempFile p = write_file("overflow.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", ""));
  expect_user_error([&] { (void)st::npy_load(p); }, "npy_load", {"(4294967296,4294967296)", "too large"});
}
TEST(BadInputsFiles, NpyShapeEntryTooLarge) {
  TempFile p = write_file("entry.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", ""));
  expect_user_error([&] { (void)st::npy_load(p); }, "npy_load", {"too large"});
}
TEST(BadInputsFiles, NpyUnsupportedDtype) {
  TempFile p = write_file("complex.npy", npy("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", std::string(16, '\0')));
  expect_user_error([&] { (void)st::npy_load(p); }, "npy_load", {"<c8"});
}
TEST(BadInputsFiles, NpyFortranOrder) {
  TempFile p = write_file("fortran.npy", npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", f32_bytes({1, 2})));
  expect_user_error([&] { (void)st::npy_load(p); }, "npy_load", {"fortran_order"});
}
TEST(BadInputsFiles, NpyHeaderNotADict) {
  TempFile p = write_file("notdict.npy", npy("[1, 2, 3]", ""));
  expect_user_error([&] { (void)st::npy_load(p); }, "npy_load", {"malformed"});
}
TEST(BadInputsFiles, NpyNegativeShape) {
  TempFile p = write_file("negative.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", ""));
  expect_user_error([&] { (void)st::npy_load(p); }, "npy_load", {"malformed"});
}
TEST(BadInputsFiles, NpyVersion) {
  TempFile p = write_file("version.npy", npy(kF32Pair, f32_bytes({1, 2}), 7));
  expect_user_error([&] { (void)st::npy_load(p); }, "npy_load", {"version 7"});
}
TEST(BadInputsFiles, NpyValid) {
  TempFile p = write_file("ok.npy", npy(kF32Pair, f32_bytes({1.5f, -2.f})));
  expect_ref(st::npy_load(p), files_npy_valid);
}

// ---- safetensors ----
TEST(BadInputsFiles, SafetensorsHeaderPastFile) {
  TempFile p = write_file("hlen.safetensors", le(1000, 8) + "{}      ");
  expect_user_error([&] { (void)st::safe_load(p); }, "safe_load", {"header length 1000", "16 bytes"});
}
TEST(BadInputsFiles, SafetensorsHugeHeaderLength) {
  TempFile p = write_file("hlen_huge.safetensors", le(uint64_t{1} << 63, 8) + "{}");
  expect_user_error([&] { (void)st::safe_load(p); }, "safe_load", {"header length"});
}
TEST(BadInputsFiles, SafetensorsBadJson) {
  TempFile p = write_file("json.safetensors", safetensors("{\"a\": [", ""));
  expect_user_error([&] { (void)st::safe_load(p); }, "safe_load", {"JSON"});
}
TEST(BadInputsFiles, SafetensorsOffsetsPastEnd) {
  TempFile p = write_file("past.safetensors",
                             safetensors(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", f32_bytes({1, 2})));
  expect_user_error([&] { (void)st::safe_load(p); }, "safe_load", {"'w'"});
}
TEST(BadInputsFiles, SafetensorsShapeOverflow) {
  TempFile p = write_file("overflow.safetensors",
                             safetensors(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", f32_bytes({1, 2})));
  expect_user_error([&] { (void)st::safe_load(p); }, "safe_load", {"'w'", "[4294967296,4294967296]"});
}
TEST(BadInputsFiles, SafetensorsUnknownDtype) {
  TempFile p = write_file("dtype.safetensors",
                             safetensors(R"({"w":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})", f32_bytes({1, 2})));
  expect_user_error([&] { (void)st::safe_load(p); }, "safe_load", {"C64"});
}
TEST(BadInputsFiles, SafetensorsOverlap) {
  TempFile p = write_file(
      "overlap.safetensors",
      safetensors(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                  f32_bytes({1, 2, 3})));
  expect_user_error([&] { (void)st::safe_load(p); }, "safe_load", {"overlaps"});
}
TEST(BadInputsFiles, SafetensorsValid) {
  TempFile p = write_file("ok.safetensors",
                             safetensors(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", f32_bytes({1.5f, -2.f})));
  expect_ref(st::safe_load(p).at("w"), files_npy_valid);
}

// ---- idx (MNIST-style datasets) ----
TEST(BadInputsFiles, IdxBadMagic) {
  TempFile p = write_file("magic.idx", "\x01\x02\x08\x01");
  expect_user_error([&] { (void)nn::datasets::load_idx(p); }, "load_idx", {"not an idx file"});
}
TEST(BadInputsFiles, IdxShapeLargerThanFile) {
  TempFile p = write_file("big.idx", idx({60000, 28, 28}, std::string(10, '\0')));
  expect_user_error([&] { (void)nn::datasets::load_idx(p); }, "load_idx", {"larger than the file"});
}
TEST(BadInputsFiles, IdxWrongType) {
  TempFile p = write_file("float.idx", idx({2}, std::string(8, '\0'), 0x0D));
  expect_user_error([&] { (void)nn::datasets::load_idx(p); }, "load_idx", {"type"});
}
TEST(BadInputsFiles, IdxTruncatedHeader) {
  TempFile p = write_file("header.idx", std::string("\0\0\x08\x03\0\0", 6));
  expect_user_error([&] { (void)nn::datasets::load_idx(p); }, "load_idx", {"truncated"});
}
TEST(BadInputsFiles, IdxValid) {
  TempFile p = write_file("ok.idx", idx({2, 2}, "\x01\x02\x03\xff"));
  expect_ref(nn::datasets::load_idx(p), files_idx_valid);
}

// nn::state: safetensors and .npy files written by NumPy (tests/ref/make_safetensors.py) load with the
// right dtypes, shapes and values; files tg writes load back in tg and in NumPy; every malformed file
// is a tg::Error; load_state_dict reports missing, unexpected and mis-shaped tensors; Module registry.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>

#include "test_util.h"
#include "tg/tg.h"

using namespace tg;
using ::testing::AllOf;
using ::testing::HasSubstr;
namespace fs = std::filesystem;
namespace st = tg::nn::state;

namespace {

// The dtypes make_safetensors.py writes, by tg name.
const std::vector<DType> kDtypes = {dtypes::float32, dtypes::float64, dtypes::float16, dtypes::int8,  dtypes::uint8,  dtypes::int16,
                                    dtypes::uint16,  dtypes::int32,   dtypes::uint32,  dtypes::int64, dtypes::uint64, dtypes::bool_};

// make_safetensors.py's values(): a formula of the flat index.
std::vector<double> values_for(DType d, int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; i++) {
    if (d.is_float()) v.push_back(static_cast<double>(i - 3) * 0.375);
    else if (d.is_bool()) v.push_back(i % 3 == 0);
    else if (d == dtypes::int64) v.push_back(static_cast<double>((i - 3) * (int64_t{1} << 33) + 7));
    else if (d == dtypes::uint64) v.push_back(static_cast<double>(i * (int64_t{1} << 35) + 1));
    else if (d.is_unsigned()) v.push_back(static_cast<double>(i * 13 + 100));
    else v.push_back(static_cast<double>(i * 7 - 20));
  }
  return v;
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Tensor make(DType d, const Shape& shape = {2, 3}) { return Tensor(values_for(d, numel(shape)), shape).cast(d); }

void expect_tensor(const Tensor& t, DType d, const Shape& shape, const std::string& what) {
  EXPECT_EQ(t.dtype(), d) << what;
  EXPECT_EQ(t.shape(), shape) << what;
  if (t.dtype() == d && t.shape() == shape) {
    EXPECT_EQ(t.tolist<double>(), values_for(d, numel(shape))) << what;
  }
}

// A temp dir holding NumPy's reference files, made once for the suite.
class StateFiles : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/tg_state_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::string cmd = "/usr/bin/python3 " TG_SOURCE_DIR "/tests/ref/make_safetensors.py write " + dir_;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << " failed (needs Debian's python3-numpy)";
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string path(const std::string& name) { return dir_ + "/" + name; }
  static inline std::string dir_;

  // A safetensors file from raw parts: the 8-byte length (the header's own unless given), header, data.
  static std::string raw_file(const std::string& name, const std::string& header, const std::string& data,
                              std::optional<uint64_t> len = std::nullopt) {
    std::string p = path(name);
    std::ofstream f(p, std::ios::binary);
    uint64_t n = len.value_or(header.size());
    f.write(reinterpret_cast<const char*>(&n), 8);
    f << header << data;
    return p;
  }
};

}  // namespace

TEST_F(StateFiles, SafetensorsFromNumpy) {
  auto sd = st::safe_load(path("ref.safetensors"));
  EXPECT_EQ(sd.size(), kDtypes.size() + 3);
  for (DType d : kDtypes) {
    ASSERT_TRUE(sd.count(d.name())) << d.name();
    expect_tensor(sd.at(d.name()), d, {2, 3}, "safetensors " + d.name());
  }
  EXPECT_EQ(sd.at("scalar").shape(), Shape{});
  EXPECT_EQ(sd.at("scalar").item<float>(), 2.5f);
  EXPECT_EQ(sd.at("empty").shape(), (Shape{0, 3}));
  expect_tensor(sd.at("layer.weight"), dtypes::float32, {4, 2}, "layer.weight");
  auto md = st::safe_load_metadata(path("ref.safetensors"));
  EXPECT_EQ(md, (std::map<std::string, std::string>{{"format", "pt"}, {"note", "numpy"}}));
}

TEST_F(StateFiles, NpyFromNumpy) {
  for (DType d : kDtypes) expect_tensor(st::npy_load(path(d.name() + ".npy")), d, {2, 3}, "npy " + d.name());
  Tensor s = st::npy_load(path("scalar.npy"));
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.item<float>(), 2.5f);
  EXPECT_EQ(st::npy_load(path("empty.npy")).shape(), (Shape{0, 3}));
  expect_tensor(st::npy_load(path("v2.npy")), dtypes::float32, {3, 4}, "npy format 2.0");
  expect_tensor(st::npy_load(path("v3.npy")), dtypes::int32, {3, 4}, "npy format 3.0");
  EXPECT_THAT(error_of([] { st::npy_load(path("fortran.npy")); }), HasSubstr("fortran_order"));
  EXPECT_THAT(error_of([] { st::npy_load(path("bigendian.npy")); }), HasSubstr("big-endian"));
  EXPECT_THAT(error_of([] { st::npy_load(path("structured.npy")); }), HasSubstr("structured"));
}

// tg writes, tg reads back, and NumPy reads tg's files (make_safetensors.py check).
TEST_F(StateFiles, RoundTripsAndNumpyReadsOurFiles) {
  std::map<std::string, Tensor> sd;
  for (DType d : kDtypes) sd.emplace(d.name(), make(d).permute({1, 0}).permute({1, 0}));  // a view, saved in C order
  st::safe_save(sd, path("tg_out.safetensors"), {{"written_by", "tg"}});
  auto back = st::safe_load(path("tg_out.safetensors"));
  EXPECT_EQ(back.size(), sd.size());
  for (DType d : kDtypes) expect_tensor(back.at(d.name()), d, {2, 3}, "safetensors round trip " + d.name());
  EXPECT_EQ(st::safe_load_metadata(path("tg_out.safetensors")), (std::map<std::string, std::string>{{"written_by", "tg"}}));
  std::ifstream f(path("tg_out.safetensors"), std::ios::binary);
  uint64_t n = 0;
  f.read(reinterpret_cast<char*>(&n), 8);
  EXPECT_EQ(n % 8, 0u) << "the data starts 8-byte aligned";

  for (DType d : kDtypes) {
    st::npy_save(make(d), path("tg_" + d.name() + ".npy"));
    expect_tensor(st::npy_load(path("tg_" + d.name() + ".npy")), d, {2, 3}, "npy round trip " + d.name());
  }
  st::npy_save(Tensor(std::vector<float>{2.5f}, {}), path("tg_scalar.npy"));
  st::npy_save(Tensor::zeros({0, 2}), path("tg_empty.npy"));
  EXPECT_EQ(st::npy_load(path("tg_empty.npy")).shape(), (Shape{0, 2}));
  std::string cmd = "/usr/bin/python3 " TG_SOURCE_DIR "/tests/ref/make_safetensors.py check " + dir_;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "NumPy could not read tg's files: " << cmd;

  // a strided view of 1000 values survives, and a model-sized name list
  Tensor big = Tensor::arange(0, 2000, 1, dtypes::float32).reshape({40, 50}).shrink({{0, 40}, {0, 25}});
  st::safe_save({{"big", big}, {"a.b.c", Tensor({1, 2, 3})}}, path("tg_big.safetensors"));
  auto b2 = st::safe_load(path("tg_big.safetensors"));
  EXPECT_EQ(b2.at("big").tolist<float>(), big.tolist<float>());
  EXPECT_EQ(b2.at("a.b.c").tolist<int>(), (std::vector<int>{1, 2, 3}));
}

// bfloat16 has no tg dtype: it loads widened to float32 (exactly).
TEST_F(StateFiles, SafetensorsBF16) {
  const char data[] = {'\x80', '\x3f', '\x20', '\xc0'};  // 1.0, -2.5
  auto sd = st::safe_load(raw_file("bf16.st", R"({"h":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})", std::string(data, 4)));
  EXPECT_EQ(sd.at("h").dtype(), dtypes::float32);
  EXPECT_EQ(sd.at("h").tolist<float>(), (std::vector<float>{1.f, -2.5f}));
}

TEST_F(StateFiles, MalformedSafetensors) {
  const std::string ok_entry = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  const std::string data8(8, '\0');
  auto load = [](const std::string& p) { return [p] { st::safe_load(p); }; };
  // the well-formed base case loads
  EXPECT_EQ(st::safe_load(raw_file("ok.st", "{" + ok_entry + "}", data8)).at("a").shape(), Shape{2});

  { std::ofstream f(path("short.st"), std::ios::binary); f << "abc"; }
  EXPECT_THAT(error_of(load(path("short.st"))), AllOf(HasSubstr("truncated"), HasSubstr("header length")));
  EXPECT_THAT(error_of(load(raw_file("len_past_end.st", "{" + ok_entry + "}", data8, 1000))), HasSubstr("past the end of the file"));
  EXPECT_THAT(error_of(load(raw_file("len_huge.st", "{}", "", ~uint64_t{0}))), HasSubstr("past the end of the file"));
  EXPECT_THAT(error_of(load(raw_file("bad_json.st", "{\"a\": [1, 2", data8))), HasSubstr("not valid JSON"));
  EXPECT_THAT(error_of(load(raw_file("not_object.st", "[1, 2]", data8))), HasSubstr("not a JSON object"));
  EXPECT_THAT(error_of(load(raw_file("missing.st", R"({"a":{"dtype":"F32"}})", data8))), HasSubstr("data_offsets"));
  EXPECT_THAT(error_of(load(raw_file("dtype.st", R"({"a":{"dtype":"F8","shape":[2],"data_offsets":[0,8]}})", data8))),
              AllOf(HasSubstr("unknown dtype"), HasSubstr("F8")));
  EXPECT_THAT(error_of(load(raw_file("neg_shape.st", R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data8))),
              HasSubstr("non-negative integer"));
  EXPECT_THAT(error_of(load(raw_file("frac_shape.st", R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,8]}})", data8))),
              HasSubstr("non-negative integer"));
  EXPECT_THAT(error_of(load(raw_file("size.st", R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data8))),
              AllOf(HasSubstr("needs 12 bytes"), HasSubstr("hold 8")));
  EXPECT_THAT(error_of(load(raw_file("overflow.st", R"({"a":{"dtype":"F64","shape":[4611686018427387904,4],"data_offsets":[0,8]}})", data8))),
              HasSubstr("too many"));
  EXPECT_THAT(error_of(load(raw_file("range.st", R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", data8))),
              HasSubstr("past the end of the data"));
  EXPECT_THAT(error_of(load(raw_file("reversed.st", R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", data8))),
              HasSubstr("end before"));
  EXPECT_THAT(error_of(load(raw_file("offsets_type.st", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", data8))),
              HasSubstr("pair of non-negative integers"));
  EXPECT_THAT(error_of(load(raw_file("overlap.st",
                                     R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                     std::string(12, '\0')))),
              HasSubstr("overlaps"));
  EXPECT_THAT(error_of(load(raw_file("gap.st", R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", data8))),
              HasSubstr("belong to no tensor"));
  EXPECT_THAT(error_of(load(raw_file("tail.st", "{" + ok_entry + "}", std::string(12, '\0')))), HasSubstr("cover only 8"));
  EXPECT_THAT(error_of(load(raw_file("meta.st", R"({"__metadata__":{"k":1},)" + ok_entry + "}", data8))), HasSubstr("__metadata__"));
  EXPECT_THAT(error_of(load(path("does_not_exist.st"))), HasSubstr("cannot open"));
  // saving: names and dtypes the format cannot hold
  EXPECT_THAT(error_of([] { st::safe_save({{"__metadata__", Tensor({1.f})}}, path("x.st")); }), HasSubstr("reserved"));
  EXPECT_THAT(error_of([] { st::safe_save({{"a", Tensor({1.f})}}, "/nonexistent_dir/x.st"); }), HasSubstr("cannot open"));
}

TEST_F(StateFiles, MalformedNpy) {
  auto npy = [](const std::string& name, const std::string& header, const std::string& data, char version = 1) {
    std::string p = path(name);
    std::ofstream f(p, std::ios::binary);
    f << "\x93NUMPY" << version << '\0';
    uint32_t n = static_cast<uint32_t>(header.size());
    f.write(reinterpret_cast<const char*>(&n), version == 1 ? 2 : 4);
    f << header << data;
    return [p] { st::npy_load(p); };
  };
  const std::string f32_2 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  EXPECT_NO_THROW(npy("ok.npy", f32_2, std::string(8, '\0'))());
  EXPECT_THAT(error_of(npy("short_data.npy", f32_2, std::string(5, '\0'))), AllOf(HasSubstr("needs 8 bytes"), HasSubstr("has 5")));
  EXPECT_THAT(error_of(npy("long_data.npy", f32_2, std::string(9, '\0'))), HasSubstr("has 9"));
  EXPECT_THAT(error_of(npy("version.npy", f32_2, "", 7)), HasSubstr("version 7"));
  EXPECT_THAT(error_of(npy("descr.npy", "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", "")), HasSubstr("unsupported dtype"));
  EXPECT_THAT(error_of(npy("noshape.npy", "{'descr': '<f4', 'fortran_order': False, }", "")), HasSubstr("lacks"));
  EXPECT_THAT(error_of(npy("badshape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", "")), HasSubstr("malformed header"));
  EXPECT_THAT(error_of(npy("unterminated.npy", "{'descr': '<f4", "")), HasSubstr("unterminated"));
  EXPECT_THAT(error_of(npy("bool_value.npy", "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", "")), HasSubstr("True or False"));
  EXPECT_THAT(error_of(npy("huge.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 8), }", "")),
              HasSubstr("too large"));
  { std::ofstream f(path("hlen.npy"), std::ios::binary); f << "\x93NUMPY\x01"; f.put('\0'); f << "\xff\xff{'descr'"; }
  EXPECT_THAT(error_of([] { st::npy_load(path("hlen.npy")); }), HasSubstr("truncated"));
  { std::ofstream f(path("magic.npy"), std::ios::binary); f << "PK\x03\x04 not npy at all"; }
  EXPECT_THAT(error_of([] { st::npy_load(path("magic.npy")); }), HasSubstr("magic"));
}

// ---- Module registry and load_state_dict ---------------------------------------------------------------

namespace {
struct Net : nn::Module {
  nn::Linear layer{2, 4, false};
  nn::BatchNorm bn{4};
  Net() {
    register_module("layer", layer);
    register_module("bn", bn);
  }
};
}  // namespace

TEST(StateModule, RegistryNamesAndParameters) {
  Net net;
  std::vector<std::string> names;
  for (const auto& [n, t] : net.named_tensors()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"layer.weight", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var",
                                             "bn.num_batches_tracked"}));
  EXPECT_EQ(net.parameters().size(), 3u);  // running stats are state, not parameters
  EXPECT_EQ(st::get_parameters(net).size(), 6u);
  EXPECT_TRUE(net.parameters()[0].is_same(net.layer.weight));
  EXPECT_EQ(st::get_state_dict(net).size(), 6u);
  EXPECT_THAT(error_of([&] { net.register_tensor("bn.bias", Tensor({1.f})); }), HasSubstr("already registered"));
  EXPECT_THAT(error_of([&] { net.register_module("layer", net.layer); }), HasSubstr("'layer.weight' is already registered"));
}

TEST_F(StateFiles, LoadStateDict) {
  struct M : nn::Module {
    nn::Linear layer{2, 4, false};
    M() { register_module("layer", layer); }
  } m;
  Tensor alias = m.layer.weight;  // another handle: sees the loaded values too
  auto sd = st::safe_load(path("ref.safetensors"));
  EXPECT_THAT(error_of([&] { st::load_state_dict(m, sd); }), AllOf(HasSubstr("unexpected key"), HasSubstr("strict")));
  st::load_state_dict(m, sd, /*strict=*/false);
  expect_tensor(m.layer.weight, dtypes::float32, {4, 2}, "loaded weight");
  expect_tensor(alias, dtypes::float32, {4, 2}, "alias of loaded weight");
  // a float64 state is cast to the model's dtype
  st::load_state_dict(m, {{"layer.weight", Tensor::full({4, 2}, 0.5, dtypes::float64)}});
  EXPECT_EQ(m.layer.weight.dtype(), dtypes::float32);
  EXPECT_EQ(alias.tolist<float>(), std::vector<float>(8, 0.5f));

  EXPECT_THAT(error_of([&] { st::load_state_dict(m, {{"layer.weight", Tensor::zeros({2, 4})}}); }),
              AllOf(HasSubstr("shape mismatch"), HasSubstr("layer.weight"), HasSubstr("(4,2)"), HasSubstr("(2,4)")));
  EXPECT_THAT(error_of([&] { st::load_state_dict(m, {}); }), AllOf(HasSubstr("missing key"), HasSubstr("layer.weight")));
  st::load_state_dict(m, {}, /*strict=*/false);  // loads nothing
  EXPECT_EQ(alias.tolist<float>(), std::vector<float>(8, 0.5f)) << "a failed load leaves the model unchanged";

  // a whole model through a file
  Net a, b;
  st::safe_save(st::get_state_dict(a), path("net.safetensors"));
  st::load_state_dict(b, st::safe_load(path("net.safetensors")));
  EXPECT_EQ(b.layer.weight.tolist<float>(), a.layer.weight.tolist<float>());
  EXPECT_EQ(b.bn.num_batches_tracked->dtype(), dtypes::int64);
}

TEST(StateModule, OptimizerNeedsParameters) {
  EXPECT_THAT(error_of([] { nn::optim::SGD({}); }), HasSubstr("at least one parameter"));
  EXPECT_THAT(error_of([] { nn::optim::Adam({Tensor::ones({2}).requires_grad_(false)}); }), HasSubstr("at least one parameter"));
  Tensor w = Tensor::ones({2});
  nn::optim::SGD opt({w}, 0.1);
  EXPECT_EQ(w.requires_grad(), std::optional<bool>(true));  // unset becomes true
  EXPECT_THAT(error_of([&] { opt.step(); }), HasSubstr("Tensor::training"));
  TrainingGuard tr;
  EXPECT_THAT(error_of([&] { opt.step(); }), HasSubstr("has no gradient"));
}

// Every truncation of a valid file, and random byte flips in its header, give a tg::Error (or, for a
// flip that keeps the file valid, a clean load): never a crash or a read out of bounds.
TEST_F(StateFiles, TruncatedAndCorruptedFiles) {
  for (const std::string name : {"ref.safetensors", "float32.npy"}) {
    std::ifstream in(path(name), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto load = [&](const std::string& p) {
      if (name.ends_with(".npy")) st::npy_load(p);
      else st::safe_load(p);
    };
    std::string p = path("mutant_" + name);
    for (size_t n = 0; n < bytes.size(); n++) {
      { std::ofstream f(p, std::ios::binary | std::ios::trunc); f.write(bytes.data(), static_cast<std::streamsize>(n)); }
      EXPECT_THROW(load(p), tg::Error) << name << " truncated to " << n << " bytes";
    }
    std::mt19937 rng(5);
    size_t header_end = std::min<size_t>(bytes.size(), 200);
    for (int i = 0; i < 300; i++) {
      std::string m = bytes;
      m[rng() % header_end] = static_cast<char>(rng() & 0xff);
      { std::ofstream f(p, std::ios::binary | std::ios::trunc); f << m; }
      try {
        load(p);
      } catch (const tg::Error&) {
      }
    }
  }
}

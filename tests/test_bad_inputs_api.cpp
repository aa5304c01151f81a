// Bad-input catalogue: the rest of tinygrad's Tensor API (einsum, multinomial, interpolate, replace,
// sequential, repeat_interleave), the error kinds the Python module maps to what torch's and tinygrad's users catch (an
// IndexError for a 0-d cat and a float index tensor), backward from a comparison, and torch_load of
// malformed, truncated and malicious files: each a tg::Error naming the op or file, nothing run, no crash.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bad_inputs.h"
#include "tg/state.h"

using namespace tg;
using namespace bad_inputs;
namespace st = tg::nn::state;
using namespace tg::indexing;

namespace {

// f throws exactly the kind K (a tg::Error subclass) whose message starts with "<op>:".
template <class K>
void expect_kind(const std::function<void()>& f, const std::string& op) {
  try {
    f();
  } catch (const K& e) {
    EXPECT_THAT(std::string(e.what()), ::testing::StartsWith(op + ":"));
    return;
  } catch (const std::exception& e) {
    FAIL() << "another kind of error: " << e.what();
  }
  FAIL() << "nothing was thrown";
}

Tensor e(Shape s) { return Tensor::ones(s); }

}  // namespace

// ---- einsum ----
TEST(BadInputsApi, EinsumTooFewOperands) { expect_user_error([] { (void)Tensor::einsum("ij,jk->ik", {e({2, 3})}); }, "einsum", {"2 operands", "1 tensor"}); }
TEST(BadInputsApi, EinsumNoOperands) { expect_user_error([] { (void)Tensor::einsum("ij", {}); }, "einsum", {"at least one"}); }
TEST(BadInputsApi, EinsumSizes) {
  expect_user_error([] { (void)Tensor::einsum("ij,jk", {e({2, 3}), e({4, 5})}); }, "einsum", {"subscript j", "(4,5)"});
}
TEST(BadInputsApi, EinsumDiagonalSizes) { expect_user_error([] { (void)Tensor::einsum("ii", {e({2, 3})}); }, "einsum", {"repeated", "2 != 3"}); }
TEST(BadInputsApi, EinsumRank) { expect_user_error([] { (void)Tensor::einsum("ijk->i", {e({2, 3})}); }, "einsum", {"(2,3)", "3"}); }
TEST(BadInputsApi, EinsumRankWithEllipsis) { expect_user_error([] { (void)Tensor::einsum("...ijk", {e({2, 3})}); }, "einsum", {"fewer"}); }
TEST(BadInputsApi, EinsumBadChar) { expect_user_error([] { (void)Tensor::einsum("i2", {e({2, 3})}); }, "einsum", {"invalid subscript '2'"}); }
TEST(BadInputsApi, EinsumLoneDot) { expect_user_error([] { (void)Tensor::einsum("i.j", {e({2, 3})}); }, "einsum", {"ellipsis"}); }
TEST(BadInputsApi, EinsumOutputUnknown) { expect_user_error([] { (void)Tensor::einsum("ij->k", {e({2, 3})}); }, "einsum", {"subscript k"}); }
TEST(BadInputsApi, EinsumOutputRepeated) { expect_user_error([] { (void)Tensor::einsum("ij->jj", {e({2, 3})}); }, "einsum", {"more than once"}); }
TEST(BadInputsApi, EinsumTwoArrows) { expect_user_error([] { (void)Tensor::einsum("ij->j->i", {e({2, 3})}); }, "einsum", {"'->'"}); }
TEST(BadInputsApi, EinsumEllipsisBroadcast) {
  expect_user_error([] { (void)Tensor::einsum("...i,...i", {e({2, 3}), e({4, 3})}); }, "einsum", {"does not broadcast"});
}
TEST(BadInputsApi, EinsumEmptyAndSizeOne) {  // an empty dim and size-1 broadcasting are fine
  EXPECT_EQ(Tensor::einsum("ij,jk->ik", {e({2, 0}), e({0, 3})}).tolist<float>(), std::vector<float>(6, 0.f));
  EXPECT_EQ(Tensor::einsum("i,i->i", {e({3}), e({1})}).shape(), (Shape{3}));
}

// ---- multinomial, interpolate, replace, sequential, max_pool2d(ceil_mode) ----
TEST(BadInputsApi, MultinomialRank) { expect_user_error([] { (void)e({2, 2, 2}).multinomial(); }, "multinomial", {"(2,2,2)"}); }
TEST(BadInputsApi, MultinomialSamples) { expect_user_error([] { (void)e({3}).multinomial(0); }, "multinomial", {"positive"}); }
TEST(BadInputsApi, MultinomialNoReplacement) {
  expect_user_error([] { (void)e({3}).multinomial(4, false); }, "multinomial", {"4 samples", "3 categories"});
}
TEST(BadInputsApi, MultinomialEmpty) { expect_user_error([] { (void)e({2, 0}).multinomial(1, true); }, "multinomial", {"no categories"}); }
TEST(BadInputsApi, InterpolateMode) { expect_user_error([] { (void)e({1, 1, 2, 2}).interpolate({3, 3}, "area"); }, "interpolate", {"'area'"}); }
TEST(BadInputsApi, InterpolateSizes) { expect_user_error([] { (void)e({2, 2}).interpolate({1, 2, 3}); }, "interpolate", {"(2,2)"}); }
TEST(BadInputsApi, InterpolateZero) { expect_user_error([] { (void)e({1, 2, 2}).interpolate({0}); }, "interpolate", {"greater than 0"}); }
TEST(BadInputsApi, InterpolateAlignNearest) {
  expect_user_error([] { (void)e({1, 2, 2}).interpolate({4}, "nearest", true); }, "interpolate", {"align_corners"});
}
TEST(BadInputsApi, InterpolateBilinearSizes) { expect_user_error([] { (void)e({1, 2, 2}).interpolate({4}, "bilinear"); }, "interpolate", {"2 sizes"}); }
TEST(BadInputsApi, ReplaceShape) { expect_user_error([] { Tensor t = e({2, 3}); t.replace(e({3, 2})); }, "replace", {"(3,2)", "(2,3)"}); }
TEST(BadInputsApi, ReplaceWithGrad) {
  expect_user_error([] { Tensor t = e({2}); t.replace(Tensor::ones({2}).requires_grad_()); }, "replace", {"requires grad"});
}
TEST(BadInputsApi, ReplaceOpResult) {
  Tensor w = Tensor::ones({2}).requires_grad_();
  Tensor y = w * 2;
  expect_user_error([&] { y.replace(e({2})); }, "replace", {"leaf"});
}
TEST(BadInputsApi, ReplaceKeepsHandles) {
  Tensor t = e({2, 2}), alias = t;
  t.replace(Tensor({1, 2, 3, 4}).reshape({2, 2}));
  EXPECT_EQ(alias.dtype(), dtypes::int32);
  EXPECT_EQ(alias.tolist<int>(), (std::vector<int>{1, 2, 3, 4}));
}
TEST(BadInputsApi, SequentialEmptyFunction) {
  expect_user_error([] { (void)e({2}).sequential({[](const Tensor& x) { return x * 2; }, nullptr}); }, "sequential", {"(2,)"});
  EXPECT_EQ(e({2}).sequential({[](const Tensor& x) { return x * 2; }, [](const Tensor& x) { return x + 1; }}).tolist<float>(),
            (std::vector<float>{3, 3}));
}
TEST(BadInputsApi, MaxPoolCeilKernelTooBig) {
  expect_user_error([] { (void)e({1, 1, 2, 2}).max_pool2d({3, 3}, {}, {1}, {0}, true); }, "max_pool2d", {"bigger"});
}

TEST(BadInputsApi, RepeatInterleaveNegative) { expect_user_error([] { (void)e({2, 3}).repeat_interleave(-1, 1); }, "repeat_interleave", {"-1", "(2,3)"}); }
TEST(BadInputsApi, RepeatInterleaveAxis) {
  expect_kind<IndexError>([] { (void)e({2, 3}).repeat_interleave(2, 2); }, "repeat_interleave");
  expect_user_error([] { (void)Tensor(1.f).repeat_interleave(2, 1); }, "repeat_interleave", {"shape ()"});
}
TEST(BadInputsApi, RepeatInterleaveOverflow) {
  expect_user_error([] { (void)e({4}).repeat_interleave(int64_t{1} << 62, 0); }, "repeat_interleave", {"overflows"});
}
TEST(BadInputsApi, RepeatInterleaveValues) {  // against the definition: out[.., i, ..] = x[.., i / r, ..] along dim
  const int64_t A = 2, B = 3, C = 4;
  std::vector<float> v(A * B * C);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i);
  Tensor x(v, {A, B, C});
  for (int64_t r : {0, 1, 3}) {
    for (int dim : {0, 1, 2, -1}) {
      int d = dim < 0 ? dim + 3 : dim;
      int64_t n[3] = {A, B, C};
      n[d] *= r;
      std::vector<float> want;
      for (int64_t i = 0; i < n[0]; i++)
        for (int64_t j = 0; j < n[1]; j++)
          for (int64_t k = 0; k < n[2]; k++) {
            int64_t s[3] = {i, j, k};
            s[d] /= r;
            want.push_back(v[static_cast<size_t>((s[0] * B + s[1]) * C + s[2])]);
          }
      Tensor y = x.repeat_interleave(r, dim);
      EXPECT_EQ(y.shape(), (Shape{n[0], n[1], n[2]})) << "r=" << r << " dim=" << dim;
      EXPECT_EQ(y.tolist<float>(), want) << "r=" << r << " dim=" << dim;
    }
    std::vector<float> flat;  // no dim: the flattened entries, each r times
    for (float f : v)
      for (int64_t k = 0; k < r; k++) flat.push_back(f);
    EXPECT_EQ(x.repeat_interleave(r).tolist<float>(), flat) << "r=" << r;
  }
  EXPECT_EQ(Tensor(5.f).repeat_interleave(3).tolist<float>(), (std::vector<float>{5, 5, 5}));
}

TEST(BadInputsApi, EyeRectangle) {
  expect_user_error([] { (void)Tensor::eye(2, -1); }, "eye", {"(2, -1)"});
  expect_user_error([] { (void)Tensor::eye(int64_t{1} << 40, int64_t{1} << 40); }, "eye");
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{3, 5}, {5, 3}, {0, 4}, {4, 0}, {2, 2}}) {
    std::vector<float> want;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < m; j++) want.push_back(i == j ? 1.f : 0.f);
    Tensor t = Tensor::eye(n, m);
    EXPECT_EQ(t.shape(), (Shape{n, m}));
    EXPECT_EQ(t.tolist<float>(), want) << n << "x" << m;
  }
}

// ---- error kinds ----
TEST(BadInputsApi, CatZeroDimIsIndexError) { expect_kind<IndexError>([] { (void)Tensor::cat({Tensor(1.f), Tensor(2.f)}); }, "cat"); }
TEST(BadInputsApi, CatLaterZeroDimIsIndexError) { expect_kind<IndexError>([] { (void)Tensor::cat({e({2}), Tensor(2.f)}); }, "cat"); }
TEST(BadInputsApi, FloatIndexTensorIsIndexError) { expect_kind<IndexError>([] { (void)e({3}).index({Tensor({0.f, 1.f})}); }, "index"); }
TEST(BadInputsApi, FloatIndexPutIsIndexError) {
  expect_kind<IndexError>([] { (void)e({3}).index_put({Tensor({0.f})}, Tensor(1.f)); }, "index_put");
}
TEST(BadInputsApi, GatherFloatIndexIsTypeError) { expect_kind<TypeError>([] { (void)e({3}).gather(0, Tensor({0.f})); }, "gather"); }
TEST(BadInputsApi, ZeroDimBoolMask) {
  EXPECT_EQ(e({2, 3}).index({Tensor(true)}).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(e({2, 3}).index({Tensor(false)}).shape(), (Shape{0, 2, 3}));
  EXPECT_EQ(e({2, 3}).index({0, Tensor(false)}).shape(), (Shape{0, 3}));
  EXPECT_EQ(e({2, 3}).index({Ellipsis, Tensor(true)}).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(e({2}).index_put({Tensor(false)}, Tensor(5.f)).tolist<float>(), (std::vector<float>{1, 1}));
  EXPECT_EQ(e({2}).index_put({Tensor(true)}, Tensor(5.f)).tolist<float>(), (std::vector<float>{5, 5}));
}
TEST(BadInputsApi, BackwardFromComparison) {
  Tensor x = Tensor({1.f, 2.f}).requires_grad_();
  expect_user_error([&] { (x < 2.f).cast(dtypes::float32).sum().backward(); }, "backward", {"does not require grad"});
  expect_user_error([&] { x.cast(dtypes::int32).cast(dtypes::float32).sum().backward(); }, "backward", {"does not require grad"});
}

// ---- torch_load: malformed files ----
namespace {

struct TempFile {
  std::string path;
  explicit TempFile(const std::string& name, const std::string& bytes)
      : path(::testing::TempDir() + "tg_bad_torch_" + std::to_string(::getpid()) + "_" + name) {
    std::ofstream(path, std::ios::binary) << bytes;
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { std::remove(path.c_str()); }
};

std::string le(uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; i++) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// A zip archive of stored members (no data descriptors), as torch.save writes them.
std::string zip(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out, cd;
  for (const auto& [name, data] : members) {
    uint64_t at = out.size();
    std::string h = le(0x04034b50, 4) + le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(0, 4) + le(data.size(), 4) + le(data.size(), 4) +
                    le(name.size(), 2) + le(0, 2);
    out += h + name + data;
    cd += le(0x02014b50, 4) + le(20, 2) + le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(0, 4) + le(data.size(), 4) + le(data.size(), 4) +
          le(name.size(), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(at, 4) + name;
  }
  uint64_t cd_at = out.size();
  return out + cd + le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(members.size(), 2) + le(members.size(), 2) + le(cd.size(), 4) +
         le(cd_at, 4) + le(0, 2);
}

// The same archive in ZIP64 form: the central directory's sizes and offsets in ZIP64 extra fields, found
// through the ZIP64 end of central directory record and its locator (as large checkpoints are written).
std::string zip64(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out, cd;
  for (const auto& [name, data] : members) {
    uint64_t at = out.size();
    out += le(0x04034b50, 4) + le(45, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(0, 4) + le(data.size(), 4) + le(data.size(), 4) +
           le(name.size(), 2) + le(0, 2) + name + data;
    std::string extra = le(1, 2) + le(24, 2) + le(data.size(), 8) + le(data.size(), 8) + le(at, 8);
    cd += le(0x02014b50, 4) + le(45, 2) + le(45, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(0, 4) + le(0xFFFFFFFF, 4) + le(0xFFFFFFFF, 4) +
          le(name.size(), 2) + le(extra.size(), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(0xFFFFFFFF, 4) + name + extra;
  }
  uint64_t cd_at = out.size(), end64_at = cd_at + cd.size();
  std::string end64 = le(0x06064b50, 4) + le(44, 8) + le(45, 2) + le(45, 2) + le(0, 4) + le(0, 4) + le(members.size(), 8) +
                      le(members.size(), 8) + le(cd.size(), 8) + le(cd_at, 8);
  std::string locator = le(0x07064b50, 4) + le(0, 4) + le(end64_at, 8) + le(1, 4);
  return out + cd + end64 + locator + le(0x06054b50, 4) + le(0xFFFF, 2) + le(0xFFFF, 2) + le(0xFFFF, 2) + le(0xFFFF, 2) +
         le(0xFFFFFFFF, 4) + le(0xFFFFFFFF, 4) + le(0, 2);
}

// Protocol-2 pickles by hand.
std::string str(const std::string& s) { return "X" + le(s.size(), 4) + s; }
const std::string kProto = "\x80\x02";
// {'w': _rebuild_tensor_v2(('storage', FloatStorage, '0', 'cpu', numel), offset, size, stride, False, OrderedDict())}
std::string state_dict_pickle(int numel, int offset, std::vector<int> size, std::vector<int> stride) {
  auto tuple = [](const std::vector<int>& v) {
    std::string s = "(";
    for (int x : v) s += "K" + std::string(1, static_cast<char>(x));
    return s + "t";
  };
  return kProto + "}(" + str("w") + "ctorch._utils\n_rebuild_tensor_v2\n((" + str("storage") + "ctorch\nFloatStorage\n" + str("0") +
         str("cpu") + "K" + std::string(1, static_cast<char>(numel)) + "tQK" + std::string(1, static_cast<char>(offset)) + tuple(size) +
         tuple(stride) + "\x89" + "ccollections\nOrderedDict\n)RtRu.";
}
std::string floats(int n) {
  std::string s;
  for (int i = 0; i < n; i++) {
    float f = static_cast<float>(i);
    s.append(reinterpret_cast<const char*>(&f), 4);
  }
  return s;
}

}  // namespace

TEST(BadInputsApi, TorchLoadHandMadeZip) {  // the reader's own format check: a handmade archive loads
  TempFile f("ok.pth", zip({{"archive/data.pkl", state_dict_pickle(6, 0, {2, 3}, {3, 1})}, {"archive/data/0", floats(6)}}));
  std::map<std::string, Tensor> sd = st::torch_load(f.path);
  ASSERT_EQ(sd.size(), 1u);
  EXPECT_EQ(sd.at("w").shape(), (Shape{2, 3}));
  EXPECT_EQ(sd.at("w").tolist<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  TempFile g("strided.pth", zip({{"archive/data.pkl", state_dict_pickle(6, 1, {2, 2}, {1, 2})}, {"archive/data/0", floats(6)}}));
  EXPECT_EQ(st::torch_load(g.path).at("w").tolist<float>(), (std::vector<float>{1, 3, 2, 4}));
}
TEST(BadInputsApi, TorchLoadZip64) {
  std::vector<std::pair<std::string, std::string>> m = {{"archive/data.pkl", state_dict_pickle(6, 0, {3, 2}, {2, 1})},
                                                        {"archive/data/0", floats(6)}};
  TempFile f("zip64.pth", zip64(m));
  EXPECT_EQ(st::torch_load(f.path).at("w").tolist<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  std::string full = zip64(m);
  TempFile cut("zip64_cut.pth", full.substr(0, full.size() - 30));  // the locator cut off
  expect_user_error([&] { (void)st::torch_load(cut.path); }, "torch_load");
}
TEST(BadInputsApi, TorchLoadStridesPastStorage) {
  TempFile f("past.pth", zip({{"archive/data.pkl", state_dict_pickle(6, 2, {2, 3}, {3, 1})}, {"archive/data/0", floats(6)}}));
  expect_user_error([&] { (void)st::torch_load(f.path); }, "torch_load", {"reads past the end of storage '0'"});
}
TEST(BadInputsApi, TorchLoadStorageTooSmall) {
  TempFile f("small.pth", zip({{"archive/data.pkl", state_dict_pickle(6, 0, {2, 3}, {3, 1})}, {"archive/data/0", floats(5)}}));
  expect_user_error([&] { (void)st::torch_load(f.path); }, "torch_load", {"fewer than its 6 elements"});
}
TEST(BadInputsApi, TorchLoadMalicious) {
  // os.system('touch <marker>') as a pickle: GLOBAL posix system, a tuple of one string, REDUCE
  std::string marker = ::testing::TempDir() + "tg_pwned_" + std::to_string(::getpid());
  std::string evil = kProto + "cposix\nsystem\n(" + str("touch " + marker) + "tR.";
  TempFile f("evil.pth", zip({{"archive/data.pkl", evil}}));
  expect_user_error([&] { (void)st::torch_load(f.path); }, "torch_load", {"posix.system", "does not allow"});
  TempFile g("evil_raw.pkl", evil);
  expect_user_error([&] { (void)st::torch_load(g.path); }, "torch_load", {"posix.system"});
  TempFile h("builtins.pkl", kProto + "\x8c\x08" + "builtins" + "\x8c\x04" + "eval" + "\x93(" + str("1+1") + "tR.");  // STACK_GLOBAL
  expect_user_error([&] { (void)st::torch_load(h.path); }, "torch_load", {"builtins.eval"});
  EXPECT_FALSE(std::filesystem::exists(marker));
}
TEST(BadInputsApi, TorchLoadMalformedPickles) {
  struct Case { std::string bytes, part; };
  for (const Case& c : std::vector<Case>{{kProto + "}", "truncated"},
                                         {kProto + "0.", "empty stack"},
                                         {kProto + "(K\x01.", "open MARK"},
                                         {kProto + "h\x07.", "memo entry 7"},
                                         {kProto + "X\xff\xff\xff\x7f" + "abc", "truncated"},
                                         {kProto + "K\x03K\x01K\x02s.", "not a dict"},
                                         {kProto + "\xff", "unknown pickle opcode 0xff"},
                                         {kProto + "\x82\x01", "extension registry"},
                                         {kProto + "c__main__\nModel\n)\x81.", "__main__.Model"},
                                         {kProto + "(" + str("storage") + "ctorch\nFloatStorage\n" + str("0") + str("cpu") + "K\x02tQ.",
                                          "storage '0' has no member"}}) {
    TempFile f("bad.pth", zip({{"archive/data.pkl", c.bytes}}));
    expect_user_error([&] { (void)st::torch_load(f.path); }, "torch_load", {c.part});
  }
}
TEST(BadInputsApi, TorchLoadTruncatedZip) {
  std::string full = zip({{"archive/data.pkl", state_dict_pickle(6, 0, {2, 3}, {3, 1})}, {"archive/data/0", floats(6)}});
  for (size_t n : {size_t{0}, size_t{3}, size_t{30}, full.size() / 2, full.size() - 23, full.size() - 1}) {
    TempFile f("cut.pth", full.substr(0, n));
    expect_user_error([&] { (void)st::torch_load(f.path); }, "torch_load");
  }
}
TEST(BadInputsApi, TorchLoadLegacyTruncated) {
  // the legacy stream: magic, version, info, the object, the keys, then per key its count and bytes
  std::string magic = kProto + "\x8a\x0a" + std::string("\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 10) + ".";
  std::string full = magic + kProto + "M\xe9\x03." + kProto + "}." + state_dict_pickle(6, 0, {2, 3}, {3, 1}) + kProto + "]" + str("0") +
                     "a." + le(6, 8) + floats(6);
  TempFile ok("legacy.pth", full);
  EXPECT_EQ(st::torch_load(ok.path).at("w").tolist<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  TempFile cut("legacy_cut.pth", full.substr(0, full.size() - 5));
  expect_user_error([&] { (void)st::torch_load(cut.path); }, "torch_load", {"truncated", "storage '0'"});
  TempFile badn("legacy_count.pth", full.substr(0, full.size() - 32) + le(7, 8) + floats(6));
  expect_user_error([&] { (void)st::torch_load(badn.path); }, "torch_load", {"7 elements"});
  TempFile nomagic("legacy_magic.pth", kProto + "K\x05.");
  expect_user_error([&] { (void)st::torch_load(nomagic.path); }, "torch_load", {"not a file torch.save wrote"});
}
TEST(BadInputsApi, TorchLoadMissingFile) {
  expect_kind<IOError>([] { (void)st::torch_load("/nonexistent/dir/model.pth"); }, "torch_load");
}

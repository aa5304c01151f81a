// Bad-input catalogue: labels and indices out of range. By default each op does what it documents (an
// index tensor reads 0 past the end, one_hot gives a zero row, a loss term is 0); with CHECK_INDEX=1 the
// same calls raise a tg::Error naming the op, the offending entry and the valid range.
#include "bad_inputs.h"

using namespace tg;
using namespace bad_inputs;

namespace {
Tensor x3() { return Tensor({10.f, 20.f, 30.f}); }
Tensor logits() { return Tensor(std::vector<float>{1, 2, 3, 1, 0, -1}, {2, 3}); }
nn::Embedding embedding() {  // weight rows [0, 1], [2, 3], [4, 5]
  nn::Embedding e(3, 2);
  e.weight.assign(Tensor::arange(0, 6, 1, dtypes::float32).reshape({3, 2}));
  return e;
}
}  // namespace

// ---- the documented default ----
TEST(BadInputsLabels, OneHotDefaultZeroRow) { expect_ref(Tensor({0, 3, -1, 2}).one_hot(3), labels_one_hot_default); }
TEST(BadInputsLabels, IndexDefaultReadsZero) { expect_ref(x3().index({Tensor({3, -1, -4, 1})}), labels_index_default); }
TEST(BadInputsLabels, GatherDefaultReadsZero) { expect_ref(x3().gather(0, Tensor({3, -1, 0})), labels_gather_default); }
TEST(BadInputsLabels, ScatterDefaultIgnores) {
  expect_ref(Tensor::zeros({3}).scatter(0, Tensor({5, -1}), 1.0), labels_scatter_default);
}
TEST(BadInputsLabels, EmbeddingDefault) { expect_ref(embedding()(Tensor({1, 3, -1, -4})), labels_embedding_default); }
TEST(BadInputsLabels, SparseCrossentropyDefault) {
  expect_ref(logits().sparse_categorical_crossentropy(Tensor({2, 3})), labels_sparse_ce_default);
}
TEST(BadInputsLabels, CrossEntropyDefault) { expect_ref(logits().cross_entropy(Tensor({2, 5})), labels_cross_entropy_default); }
TEST(BadInputsLabels, NllLossDefault) { expect_ref(logits().nll_loss(Tensor({1, 3})), labels_nll_default); }
TEST(BadInputsLabels, CheckIndexOffIsDefault) {
  Context ctx{{"CHECK_INDEX", 0}};
  expect_ref(Tensor({0, 3, -1, 2}).one_hot(3), labels_one_hot_default);
}

// ---- CHECK_INDEX=1 ----
TEST(BadInputsLabels, CheckedOneHotTooLarge) {
  checked([] { expect_user_error([] { (void)Tensor({0, 3}).one_hot(3); }, "one_hot", {"3", "[0, 3)", "(2,)"}); });
}
TEST(BadInputsLabels, CheckedOneHotNegative) {
  checked([] { expect_user_error([] { (void)Tensor({0, -1}).one_hot(3); }, "one_hot", {"-1", "[0, 3)"}); });
}
TEST(BadInputsLabels, CheckedOneHotInRange) {
  checked([] { expect_ref(Tensor({0, 2}).one_hot(3), labels_checked_one_hot_ok); });
}
TEST(BadInputsLabels, CheckedEmbeddingTooLarge) {
  checked([] { expect_user_error([] { (void)embedding()(Tensor({1, 3})); }, "Embedding", {"3", "[0, 3)"}); });
}
TEST(BadInputsLabels, CheckedEmbeddingNegative) {
  checked([] { expect_user_error([] { (void)embedding()(Tensor({-1})); }, "Embedding", {"-1", "[0, 3)"}); });
}
TEST(BadInputsLabels, CheckedEmbeddingInRange) {
  checked([] { expect_ref(embedding()(Tensor({2, 0})), labels_checked_embedding_ok); });
}
TEST(BadInputsLabels, CheckedIndexTooLarge) {
  checked([] { expect_user_error([] { (void)x3().index({Tensor({0, 3})}); }, "index", {"3", "[-3, 3)"}); });
}
TEST(BadInputsLabels, CheckedIndexTooNegative) {
  checked([] { expect_user_error([] { (void)x3().index({Tensor({-4})}); }, "index", {"-4", "[-3, 3)"}); });
}
TEST(BadInputsLabels, CheckedIndexNegativeInRange) {
  checked([] { expect_ref(x3().index({Tensor({-1, 0})}), labels_checked_index_neg); });
}
TEST(BadInputsLabels, CheckedIndexLazyExpression) {  // the index is computed: its values are realized for the check
  checked([] { expect_user_error([] { (void)x3().index({Tensor({0, 1}) + 2}); }, "index", {"3", "[-3, 3)"}); });
}
TEST(BadInputsLabels, CheckedIndexSecondDim) {
  checked([] {
    expect_user_error([] { (void)Tensor::ones({2, 4}).index({indexing::Slice(), Tensor({4})}); }, "index", {"4", "[-4, 4)"});
  });
}
TEST(BadInputsLabels, CheckedGatherTooLarge) {
  checked([] { expect_user_error([] { (void)x3().gather(0, Tensor({3})); }, "gather", {"3", "[-3, 3)"}); });
}
TEST(BadInputsLabels, CheckedGatherInRange) {
  checked([] { expect_ref(x3().gather(0, Tensor({2, 0})), labels_checked_gather_ok); });
}
TEST(BadInputsLabels, CheckedScatterTooLarge) {
  checked([] { expect_user_error([] { (void)Tensor::zeros({3}).scatter(0, Tensor({5}), 1.0); }, "scatter", {"5", "[-3, 3)"}); });
}
TEST(BadInputsLabels, CheckedSparseCrossentropy) {
  checked([] {
    expect_user_error([] { (void)logits().sparse_categorical_crossentropy(Tensor({2, 3})); }, "sparse_categorical_crossentropy",
                      {"3", "[0, 3)"});
  });
}
TEST(BadInputsLabels, CheckedSparseCrossentropyIgnoreIndexExempt) {
  checked([] { expect_ref(logits().sparse_categorical_crossentropy(Tensor({2, -1})), labels_checked_sparse_ce_ignore); });
}
TEST(BadInputsLabels, CheckedCrossEntropy) {
  checked([] { expect_user_error([] { (void)logits().cross_entropy(Tensor({2, 5})); }, "cross_entropy", {"5", "[0, 3)"}); });
}
TEST(BadInputsLabels, CheckedCrossEntropyNegative) {
  checked([] { expect_user_error([] { (void)logits().cross_entropy(Tensor({-1, 0})); }, "cross_entropy", {"-1", "[0, 3)"}); });
}
TEST(BadInputsLabels, CheckedNllLoss) {
  checked([] { expect_user_error([] { (void)logits().nll_loss(Tensor({1, 3})); }, "nll_loss", {"3", "[0, 3)"}); });
}
TEST(BadInputsLabels, CheckedNllLossIgnoreIndexExempt) {
  checked([] { expect_ref(logits().nll_loss(Tensor({1, -1})), labels_checked_nll_ignore); });
}
TEST(BadInputsLabels, CheckedUint8Labels) {
  checked([] {
    expect_user_error([] { (void)Tensor(std::vector<uint8_t>{0, 200}, {2}).one_hot(10); }, "one_hot", {"200", "[0, 10)"});
  });
}

// ---- index tensors of every integer type: out of range means out of range for the index's own type ----
// An int64 entry past 2^32 is not narrowed onto a valid position (2^32 + 1 used to read element 1), nor
// is a uint64 entry past int64's range read as the negative number its bits make.
namespace {
constexpr int64_t k32 = int64_t{1} << 32;
Tensor i64(std::vector<int64_t> v) { auto n = static_cast<int64_t>(v.size()); return Tensor(v, {n}); }
Tensor u64(std::vector<uint64_t> v) { auto n = static_cast<int64_t>(v.size()); return Tensor(v, {n}); }
std::vector<float> values(const Tensor& t) { return t.tolist<float>(); }
}  // namespace

TEST(BadInputsLabels, Int64IndexPast2e32ReadsZero) {
  EXPECT_EQ(values(x3().index({i64({k32 + 1, k32, -k32 + 1, -k32 - 1, 1, -1})})), (std::vector<float>{0, 0, 0, 0, 20, 30}));
  EXPECT_EQ(values(x3().gather(0, i64({k32 + 2, 2, INT64_MIN, INT64_MAX}))), (std::vector<float>{0, 30, 0, 0}));
}
TEST(BadInputsLabels, Int64IndexPast2e32InTwoDims) {
  Tensor m = Tensor::arange(0, 6, 1, dtypes::float32).reshape({2, 3});
  EXPECT_EQ(values(m.index({i64({1, 1, k32 + 1}), i64({k32 + 2, 2, 0})})), (std::vector<float>{0, 5, 0}));
  EXPECT_EQ(values(m.index({indexing::Slice(), i64({k32 + 1})})), (std::vector<float>{0, 0}));
}
TEST(BadInputsLabels, Int64ScatterPast2e32WritesNothing) {
  EXPECT_EQ(values(Tensor::zeros({3}).scatter(0, i64({k32 + 1, -1}), 1.0)), (std::vector<float>{0, 0, 1}));
}
TEST(BadInputsLabels, Int64EmbeddingAndOneHotPast2e32) {
  EXPECT_EQ(values(embedding()(i64({k32 + 1, 2}))), (std::vector<float>{0, 0, 4, 5}));
  EXPECT_EQ(i64({k32 + 1, 1}).one_hot(3).tolist<int>(), (std::vector<int>{0, 0, 0, 0, 1, 0}));
}
TEST(BadInputsLabels, UnsignedIndicesKeepTheirValue) {
  EXPECT_EQ(values(x3().index({u64({UINT64_MAX, uint64_t{1} << 63, k32 + 1, 2})})), (std::vector<float>{0, 0, 0, 30}));
  EXPECT_EQ(values(x3().gather(0, u64({UINT64_MAX, 0}))), (std::vector<float>{0, 10}));
  EXPECT_EQ(values(x3().index({Tensor(std::vector<uint32_t>{UINT32_MAX, 1}, {2})})), (std::vector<float>{0, 20}));
  EXPECT_EQ(values(x3().index({Tensor(std::vector<uint8_t>{255, 2}, {2})})), (std::vector<float>{0, 30}));
  EXPECT_EQ(values(x3().index({Tensor(std::vector<int8_t>{-1, -3, -4}, {3})})), (std::vector<float>{30, 10, 0}));
  EXPECT_EQ(values(Tensor::zeros({3}).scatter(0, u64({UINT64_MAX, 1}), 1.0)), (std::vector<float>{0, 1, 0}));
}
TEST(BadInputsLabels, CheckedInt64IndexPast2e32) {
  checked([] { expect_user_error([] { (void)x3().index({i64({0, k32 + 1})}); }, "index", {"4294967297", "[-3, 3)", "int64"}); });
  checked([] { expect_user_error([] { (void)x3().index({i64({-k32 + 1})}); }, "index", {"-4294967295", "[-3, 3)"}); });
  checked([] { expect_user_error([] { (void)x3().gather(0, i64({k32})); }, "gather", {"4294967296"}); });
  checked([] { expect_user_error([] { (void)embedding()(i64({k32 + 1})); }, "Embedding", {"4294967297", "[0, 3)"}); });
}
TEST(BadInputsLabels, CheckedUint64IndexPastInt64) {
  checked([] {
    expect_user_error([] { (void)x3().index({u64({1, UINT64_MAX})}); }, "index", {"18446744073709551615", "[-3, 3)", "uint64"});
  });
  checked([] { expect_user_error([] { (void)x3().gather(0, u64({uint64_t{1} << 63})); }, "gather", {"9223372036854775808"}); });
  checked([] { expect_ref(x3().index({u64({2, 0})}), labels_checked_gather_ok); });
}

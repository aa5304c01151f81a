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

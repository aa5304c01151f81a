#include "tg/shape.h"

#include <stdexcept>
#include <string>

#include "tg/error.h"

namespace tg {

int64_t& Shape::at(size_t i) {
  if (i >= size_) throw std::out_of_range("Shape::at: index " + std::to_string(i) + " of " + std::to_string(size_) + " dims");
  return data()[i];
}
const int64_t& Shape::at(size_t i) const { return const_cast<Shape*>(this)->at(i); }

Shape::iterator Shape::insert(const_iterator pos, size_t n, int64_t v) {
  size_t at = static_cast<size_t>(pos - cbegin());
  reserve(size_ + n);
  std::copy_backward(begin() + at, end(), end() + n);
  std::fill(begin() + at, begin() + at + n, v);
  size_ += static_cast<uint32_t>(n);
  return begin() + at;
}

void Shape::grow(size_t n) {
  size_t cap = std::max({n, size_t{2} * capacity(), kInline * 2});
  auto block = std::make_unique_for_overwrite<int64_t[]>(cap);
  std::copy(begin(), end(), block.get());
  heap_ = std::move(block);
  cap_ = static_cast<uint32_t>(cap);
}

std::ostream& operator<<(std::ostream& os, const Shape& s) {
  detail::put_tuple(os, s);
  return os;
}

}  // namespace tg

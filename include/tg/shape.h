// Shape: a tensor's dims (or a view's strides), as int64s.
//
// A small vector: up to kInline dims live inside the object, so the shapes nearly every tensor has cost
// no heap allocation to make, copy or drop (a lazy graph makes several per op). Longer ones spill to the
// heap. Otherwise it is used as std::vector<int64_t> is (the same members, iterators are pointers), and
// converts to and from one.
#pragma once
#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <ostream>
#include <type_traits>
#include <vector>

namespace tg {

class Shape {
 public:
  static constexpr size_t kInline = 6;
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  Shape() = default;
  explicit Shape(size_t n, int64_t value = 0) { assign(n, value); }
  Shape(std::initializer_list<int64_t> v) { assign(v.begin(), v.end()); }
  template <class It, class = std::enable_if_t<!std::is_integral_v<It>>> Shape(It first, It last) { assign(first, last); }
  Shape(const std::vector<int64_t>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit, as a vector
  Shape(const Shape& o) { assign(o.begin(), o.end()); }
  Shape(Shape&& o) noexcept { take(std::move(o)); }
  Shape& operator=(const Shape& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) take(std::move(o));
    return *this;
  }
  Shape& operator=(std::initializer_list<int64_t> v) {
    assign(v.begin(), v.end());
    return *this;
  }
  operator std::vector<int64_t>() const { return {begin(), end()}; }  // NOLINT: implicit, as a vector

  int64_t* data() { return heap_ ? heap_.get() : inline_; }
  const int64_t* data() const { return heap_ ? heap_.get() : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return heap_ ? cap_ : kInline; }
  iterator begin() { return data(); }
  iterator end() { return data() + size_; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }
  int64_t& operator[](size_t i) { return data()[i]; }
  const int64_t& operator[](size_t i) const { return data()[i]; }
  int64_t& at(size_t i);
  const int64_t& at(size_t i) const;
  int64_t& front() { return data()[0]; }
  const int64_t& front() const { return data()[0]; }
  int64_t& back() { return data()[size_ - 1]; }
  const int64_t& back() const { return data()[size_ - 1]; }

  void reserve(size_t n) {
    if (n > capacity()) grow(n);
  }
  void clear() { size_ = 0; }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; i++) data()[i] = value;
    size_ = n;
  }
  void push_back(int64_t v) {
    if (size_ == capacity()) grow(size_ * 2);
    data()[size_++] = v;
  }
  int64_t& emplace_back(int64_t v) {
    push_back(v);
    return back();
  }
  void pop_back() { size_--; }
  void assign(size_t n, int64_t value) {
    clear();
    resize(n, value);
  }
  template <class It> void assign(It first, It last) {
    clear();
    if constexpr (std::is_base_of_v<std::forward_iterator_tag, typename std::iterator_traits<It>::iterator_category>)
      reserve(static_cast<size_t>(std::distance(first, last)));
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
  }
  iterator insert(const_iterator pos, int64_t v) { return insert(pos, size_t{1}, v); }
  iterator insert(const_iterator pos, size_t n, int64_t v);
  template <class It, class = std::enable_if_t<!std::is_integral_v<It>>> iterator insert(const_iterator pos, It first, It last) {
    size_t at = static_cast<size_t>(pos - cbegin());
    Shape out(cbegin(), pos);  // built apart: [first, last) may lie in this shape
    for (; first != last; ++first) out.push_back(static_cast<int64_t>(*first));
    for (const int64_t* it = cbegin() + at; it != cend(); ++it) out.push_back(*it);
    *this = std::move(out);
    return begin() + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<int64_t> v) { return insert(pos, v.begin(), v.end()); }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    iterator f = begin() + (first - cbegin());
    std::copy(last, cend(), f);
    size_ -= static_cast<size_t>(last - first);
    return f;
  }
  void swap(Shape& o) noexcept {
    Shape t(std::move(o));
    o = std::move(*this);
    *this = std::move(t);
  }

  friend bool operator==(const Shape& a, const Shape& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
  friend bool operator==(const Shape& a, const std::vector<int64_t>& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
  friend std::strong_ordering operator<=>(const Shape& a, const Shape& b) {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }
  // "(2,3)", "(4,)", "()": as Python prints a tuple, and as error messages name shapes
  friend std::ostream& operator<<(std::ostream& os, const Shape& s);

 private:
  void grow(size_t n);
  void take(Shape&& o) noexcept {
    size_ = o.size_;
    cap_ = o.cap_;
    heap_ = std::move(o.heap_);
    if (!heap_) std::copy(o.inline_, o.inline_ + size_, inline_);
    o.size_ = 0;
    o.cap_ = 0;
  }

  uint32_t size_ = 0, cap_ = 0;  // cap_: the heap block's, when there is one
  std::unique_ptr<int64_t[]> heap_;
  int64_t inline_[kInline];
};

inline void swap(Shape& a, Shape& b) noexcept { a.swap(b); }

}  // namespace tg

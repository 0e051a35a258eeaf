// FlatArray<T>: a growable array of trivially copyable T for the tree's
// storage.
//
// Why not std::vector: the parser appends a node (and its fields) for every
// few bytes of source, and std::vector's range insert and value-initialising
// growth cost several times more than the store itself. Here an append is one
// capacity check and a memcpy; growth (rare: the tree reserves from the
// source size) is out of line, and new capacity is left uninitialised
// (malloc, not new T[]: T's default member initialisers would write every
// slot) because every slot is written before it is read. Trivially copyable
// aggregates are implicit-lifetime types, so malloc'd storage holds them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace gm::ast {

template <class T>
class FlatArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  FlatArray() = default;
  FlatArray(FlatArray&& other) noexcept { *this = std::move(other); }
  FlatArray& operator=(FlatArray&& other) noexcept {
    data_ = std::move(other.data_);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    return *this;
  }
  FlatArray(const FlatArray& other) { *this = other; }
  FlatArray& operator=(const FlatArray& other) {
    if (this != &other) {
      size_ = 0;
      reserve(other.size_);
      if (other.size_) std::memcpy(data_.get(), other.data_.get(), other.size_ * sizeof(T));
      size_ = other.size_;
    }
    return *this;
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T& operator[](std::size_t i) { return data_.get()[i]; }
  const T& operator[](std::size_t i) const { return data_.get()[i]; }
  T& back() { return data_.get()[size_ - 1]; }
  const T& back() const { return data_.get()[size_ - 1]; }

  void reserve(std::size_t n) {
    if (n > capacity_) grow_to(n);
  }
  void push_back(const T& v) {
    if (size_ == capacity_) grow_to(size_ + 1);
    data_.get()[size_++] = v;
  }
  // Append n elements; returns the index of the first.
  std::size_t append(const T* items, std::size_t n) {
    const std::size_t at = size_;
    if (n > capacity_ - size_) grow_to(size_ + n);
    if (n) std::memcpy(data_.get() + at, items, n * sizeof(T));
    size_ += n;
    return at;
  }
  // Make room for n more elements and return a pointer to them; the caller
  // writes all n.
  T* extend(std::size_t n) {
    if (n > capacity_ - size_) grow_to(size_ + n);
    T* p = data_.get() + size_;
    size_ += n;
    return p;
  }
  void shrink(std::size_t n) { size_ = n; }  // n <= size()

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  void grow_to(std::size_t need) {
    std::size_t cap = capacity_ ? capacity_ * 2 : 16;
    if (cap < need) cap = need;
    void* bigger = std::realloc(data_.get(), cap * sizeof(T));
    if (!bigger) throw std::bad_alloc();
    (void)data_.release();  // realloc took it
    data_.reset(static_cast<T*>(bigger));
    capacity_ = cap;
  }

  std::unique_ptr<T, Free> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace gm::ast

// A reader of the Python pickle subset that torch.save writes, which never runs anything from the file.
//
// A pickle is a program for a stack machine; Python's unpickler imports and calls whatever module and
// function the file names. This one builds plain values (None, bools, ints, floats, strings, bytes,
// tuples, lists, dicts, sets) itself, and hands every reference to a module's name (GLOBAL), every call
// (REDUCE, NEWOBJ), every BUILD and every persistent id to its owner's hooks, which accept the few names
// they know (torch_load.cpp: OrderedDict, torch's tensor rebuilders and storage types) and refuse any
// other with a tg::Error. Every read is checked against the data's end: a truncated or malformed pickle
// is a tg::Error, never a read out of bounds. Not a public header.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tg::nn::detail {

// A value the pickle made; values refer to each other by index into Pickle::values (so a deep or cyclic
// structure is never a deep chain of owners: it is freed flat).
struct PickleValue {
  enum class Kind : uint8_t { None, Bool, Int, Float, Str, Bytes, Tuple, List, Dict, Set, Global, Object };
  Kind kind = Kind::None;
  int64_t i = 0;              // Bool, Int; Object: the owner's tag
  double f = 0;               // Float
  bool big = false;           // Int that does not fit int64: s holds its little-endian two's complement bytes
  std::string s;              // Str (UTF-8), Bytes, big Int; Global: "module.name"
  std::vector<size_t> items;  // Tuple, List, Set; Dict: key, value, key, value, ... in insertion order
};

class Pickle {
 public:
  // The owner's hooks; each returns the index of the value it made (Pickle::add) or throws a tg::Error.
  struct Hooks {
    std::function<size_t(Pickle&, const std::string& module, const std::string& name)> find_class;
    std::function<size_t(Pickle&, size_t callable, size_t args)> call;       // REDUCE / NEWOBJ
    std::function<void(Pickle&, size_t obj, size_t state)> build;            // BUILD (default: dicts ignore it)
    std::function<size_t(Pickle&, size_t pid)> persistent_load;             // BINPERSID / PERSID
  };
  // `read(offset, out, n)` fetches bytes of the source, `size` is its length; `what` names it in errors.
  Pickle(std::function<void(uint64_t, void*, uint64_t)> read, uint64_t size, std::string what, Hooks hooks);

  // Runs one pickle from `offset` to its STOP; returns its value. pos() is then just past the STOP.
  size_t load(uint64_t offset);
  uint64_t pos() const { return pos_; }

  std::vector<PickleValue> values;
  size_t add(PickleValue v);
  const PickleValue& at(size_t i) const { return values[i]; }
  std::string what() const { return what_; }
  [[noreturn]] void fail(const std::string& why) const;

 private:
  std::function<void(uint64_t, void*, uint64_t)> read_;
  uint64_t size_, pos_ = 0;
  std::string what_;
  Hooks hooks_;
  std::vector<uint8_t> buf_;
  uint64_t buf_at_ = 0;

  void bytes(void* out, uint64_t n);
  uint8_t byte();
  uint64_t uint(int n);  // n little-endian bytes
  std::string line();
  std::string str(uint64_t n);
};

}  // namespace tg::nn::detail

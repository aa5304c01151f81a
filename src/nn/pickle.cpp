// The pickle stack machine (see pickle.h): protocols 0 to 5, without ever importing or calling anything.
#include "nn/pickle.h"

#include <bit>
#include <cstring>

#include "tg/error.h"

namespace tg::nn::detail {

namespace {
constexpr uint64_t kChunk = 1 << 16;        // bytes read from the source at a time
constexpr size_t kMaxLine = 1 << 16;        // a text opcode's argument (GLOBAL's names, INT, ...)
constexpr uint64_t kMaxString = 1ull << 31;  // one string or bytes object; more is not a state dict
using K = PickleValue::Kind;
}  // namespace

Pickle::Pickle(std::function<void(uint64_t, void*, uint64_t)> read, uint64_t size, std::string what, Hooks hooks)
    : read_(std::move(read)), size_(size), what_(std::move(what)), hooks_(std::move(hooks)) {}

void Pickle::fail(const std::string& why) const { TG_ERROR(what_, ": ", why); }

size_t Pickle::add(PickleValue v) {
  values.push_back(std::move(v));
  return values.size() - 1;
}

void Pickle::bytes(void* out, uint64_t n) {
  if (n > size_ - pos_) fail("the pickle is truncated: it needs " + std::to_string(n) + " bytes at offset " + std::to_string(pos_) +
                             " but the data ends at " + std::to_string(size_));
  auto* o = static_cast<uint8_t*>(out);
  while (n > 0) {
    if (pos_ < buf_at_ || pos_ >= buf_at_ + buf_.size()) {  // refill the window at pos_
      buf_at_ = pos_;
      buf_.resize(static_cast<size_t>(std::min(kChunk, size_ - pos_)));
      read_(buf_at_, buf_.data(), buf_.size());
    }
    uint64_t k = std::min<uint64_t>(n, buf_at_ + buf_.size() - pos_);
    std::memcpy(o, buf_.data() + (pos_ - buf_at_), static_cast<size_t>(k));
    o += k;
    pos_ += k;
    n -= k;
  }
}

uint8_t Pickle::byte() {
  uint8_t b;
  bytes(&b, 1);
  return b;
}

uint64_t Pickle::uint(int n) {
  uint8_t b[8] = {};
  bytes(b, static_cast<uint64_t>(n));
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | b[i];
  return v;
}

std::string Pickle::line() {
  std::string s;
  for (char c; (c = static_cast<char>(byte())) != '\n';) {
    if (s.size() >= kMaxLine) fail("a text argument in the pickle is longer than " + std::to_string(kMaxLine) + " bytes");
    s += c;
  }
  if (!s.empty() && s.back() == '\r') s.pop_back();
  return s;
}

std::string Pickle::str(uint64_t n) {
  if (n > kMaxString) fail("a string of " + std::to_string(n) + " bytes in the pickle is too large");
  if (n > size_ - pos_)  // checked before allocating: a corrupt length must not allocate gigabytes
    fail("the pickle is truncated: a string of " + std::to_string(n) + " bytes at offset " + std::to_string(pos_) + " but the data ends at " +
         std::to_string(size_));
  std::string s(static_cast<size_t>(n), '\0');
  bytes(s.data(), n);
  return s;
}

size_t Pickle::load(uint64_t offset) {
  if (offset > size_) fail("no pickle at offset " + std::to_string(offset));
  pos_ = offset;
  std::vector<size_t> stack;
  std::vector<size_t> marks;  // stack sizes at each MARK
  std::vector<size_t> memo;
  constexpr size_t kNoMemo = static_cast<size_t>(-1);
  auto pop = [&]() {
    if (stack.empty() || (!marks.empty() && stack.size() <= marks.back())) fail("the pickle pops an empty stack (malformed)");
    size_t v = stack.back();
    stack.pop_back();
    return v;
  };
  auto top = [&]() -> size_t {
    if (stack.empty() || (!marks.empty() && stack.size() <= marks.back())) fail("the pickle reads an empty stack (malformed)");
    return stack.back();
  };
  auto pop_mark = [&]() {  // the values above the last MARK
    if (marks.empty()) fail("the pickle has no MARK where one is needed (malformed)");
    std::vector<size_t> items(stack.begin() + static_cast<std::ptrdiff_t>(marks.back()), stack.end());
    stack.resize(marks.back());
    marks.pop_back();
    return items;
  };
  auto put = [&](uint64_t i) {
    if (stack.empty()) fail("the pickle memoizes an empty stack (malformed)");
    if (i > (1u << 28)) fail("memo index " + std::to_string(i) + " is too large");
    if (memo.size() <= i) memo.resize(static_cast<size_t>(i) + 1, kNoMemo);
    memo[static_cast<size_t>(i)] = stack.back();
  };
  auto get = [&](uint64_t i) {
    if (i >= memo.size() || memo[static_cast<size_t>(i)] == kNoMemo) fail("the pickle reads memo entry " + std::to_string(i) + ", which was never set");
    stack.push_back(memo[static_cast<size_t>(i)]);
  };
  auto make = [&](K k) {
    PickleValue v;
    v.kind = k;
    return v;
  };
  auto push = [&](PickleValue v) { stack.push_back(add(std::move(v))); };
  auto push_int = [&](int64_t i) { PickleValue v = make(K::Int); v.i = i; push(std::move(v)); };
  auto push_str = [&](K k, std::string s) { PickleValue v = make(k); v.s = std::move(s); push(std::move(v)); };
  auto push_long = [&](const std::string& le) {  // little-endian two's complement of any length
    if (le.size() <= 8) {
      uint64_t u = 0;
      for (size_t i = le.size(); i-- > 0;) u = u << 8 | static_cast<uint8_t>(le[i]);
      if (!le.empty() && le.size() < 8 && (static_cast<uint8_t>(le.back()) & 0x80)) u |= ~uint64_t{0} << (8 * le.size());  // sign-extend
      push_int(static_cast<int64_t>(u));
    } else {
      PickleValue v = make(K::Int);
      v.big = true;
      v.s = le;
      push(std::move(v));
    }
  };
  auto container = [&](size_t i, K k, const char* op) -> PickleValue& {
    if (values[i].kind != k) fail(std::string(op) + " on a value that is not a " + (k == K::List ? "list" : k == K::Dict ? "dict" : "set"));
    return values[i];
  };
  auto setitems = [&](size_t d, const std::vector<size_t>& kv) {
    if (kv.size() % 2) fail("SETITEMS with an odd number of values (malformed)");
    PickleValue& dict = container(d, K::Dict, "SETITEM");
    for (size_t j = 0; j < kv.size(); j += 2) {  // a key set again keeps its place and takes the new value
      bool found = false;
      for (size_t e = 0; e < dict.items.size() && !found; e += 2) {
        const PickleValue &a = values[dict.items[e]], &b = values[kv[j]];
        if (a.kind == b.kind && (a.kind == K::Str || a.kind == K::Int) && a.s == b.s && a.i == b.i) {
          dict.items[e + 1] = kv[j + 1];
          found = true;
        }
      }
      if (!found) dict.items.insert(dict.items.end(), {kv[j], kv[j + 1]});
    }
  };
  auto call = [&](size_t callable, size_t args) {
    if (values[args].kind != K::Tuple) fail("a call in the pickle takes arguments that are not a tuple (malformed)");
    if (!hooks_.call) fail("the pickle calls a function, which is not allowed here");
    stack.push_back(hooks_.call(*this, callable, args));
  };

  while (true) {
    uint8_t op = byte();
    switch (op) {
      case 0x80: {  // PROTO
        uint8_t p = byte();
        if (p > 5) fail("pickle protocol " + std::to_string(p) + " is not supported (0 to 5 are)");
        break;
      }
      case 0x95: uint(8); break;  // FRAME: a length hint only
      case '.': {                 // STOP
        size_t v = pop();
        if (!marks.empty()) fail("the pickle stops with an open MARK (malformed)");
        return v;
      }
      case '(': marks.push_back(stack.size()); break;  // MARK
      case '0': pop(); break;                           // POP
      case '1': pop_mark(); break;                      // POP_MARK
      case '2': stack.push_back(top()); break;          // DUP
      case 'N': push(make(K::None)); break;
      case 0x88: case 0x89: {  // NEWTRUE, NEWFALSE
        PickleValue v = make(K::Bool);
        v.i = op == 0x88;
        push(std::move(v));
        break;
      }
      case 'J': push_int(static_cast<int32_t>(static_cast<uint32_t>(uint(4)))); break;  // BININT
      case 'K': push_int(static_cast<int64_t>(uint(1))); break;                         // BININT1
      case 'M': push_int(static_cast<int64_t>(uint(2))); break;                         // BININT2
      case 0x8a: push_long(str(uint(1))); break;                                        // LONG1
      case 0x8b: {                                                                      // LONG4
        auto n = static_cast<int32_t>(static_cast<uint32_t>(uint(4)));
        if (n < 0) fail("LONG4 with a negative length (malformed)");
        push_long(str(static_cast<uint64_t>(n)));
        break;
      }
      case 'I': case 'L': {  // INT, LONG (text); "I01"/"I00" are True/False
        std::string s = line();
        if (!s.empty() && s.back() == 'L') s.pop_back();
        if (op == 'I' && (s == "01" || s == "00")) {
          PickleValue v = make(K::Bool);
          v.i = s == "01";
          push(std::move(v));
          break;
        }
        try {
          size_t used = 0;
          int64_t i = std::stoll(s, &used);
          if (used != s.size()) throw std::invalid_argument(s);
          push_int(i);
        } catch (const std::exception&) {
          fail("the integer '" + s + "' in the pickle is not an int64");
        }
        break;
      }
      case 'G': {  // BINFLOAT: big-endian double
        uint8_t b[8];
        bytes(b, 8);
        uint64_t u = 0;
        for (uint8_t x : b) u = u << 8 | x;
        PickleValue v = make(K::Float);
        v.f = std::bit_cast<double>(u);
        push(std::move(v));
        break;
      }
      case 'F': {  // FLOAT (text)
        std::string s = line();
        PickleValue v = make(K::Float);
        try {
          v.f = std::stod(s);
        } catch (const std::exception&) {
          fail("the float '" + s + "' in the pickle is not a number");
        }
        push(std::move(v));
        break;
      }
      case 'X': push_str(K::Str, str(uint(4))); break;     // BINUNICODE
      case 0x8c: push_str(K::Str, str(uint(1))); break;    // SHORT_BINUNICODE
      case 0x8d: push_str(K::Str, str(uint(8))); break;    // BINUNICODE8
      case 'T': push_str(K::Str, str(uint(4))); break;     // BINSTRING (Python 2 str)
      case 'U': push_str(K::Str, str(uint(1))); break;     // SHORT_BINSTRING
      case 'B': push_str(K::Bytes, str(uint(4))); break;   // BINBYTES
      case 'C': push_str(K::Bytes, str(uint(1))); break;   // SHORT_BINBYTES
      case 0x8e: push_str(K::Bytes, str(uint(8))); break;  // BINBYTES8
      case 0x96: push_str(K::Bytes, str(uint(8))); break;  // BYTEARRAY8
      case 'V': push_str(K::Str, line()); break;           // UNICODE (raw-unicode-escape text; ASCII names)
      case 'S': {                                          // STRING (a quoted repr)
        std::string s = line();
        if (s.size() < 2 || s.front() != s.back() || (s.front() != '\'' && s.front() != '"')) fail("a STRING in the pickle is not quoted");
        push_str(K::Str, s.substr(1, s.size() - 2));
        break;
      }
      case ')': push(make(K::Tuple)); break;  // EMPTY_TUPLE
      case 't': {                             // TUPLE
        PickleValue v = make(K::Tuple);
        v.items = pop_mark();
        push(std::move(v));
        break;
      }
      case 0x85: case 0x86: case 0x87: {  // TUPLE1..3
        PickleValue v = make(K::Tuple);
        v.items.resize(op - 0x84u);
        for (size_t j = v.items.size(); j-- > 0;) v.items[j] = pop();
        push(std::move(v));
        break;
      }
      case ']': push(make(K::List)); break;  // EMPTY_LIST
      case 'l': {                            // LIST
        PickleValue v = make(K::List);
        v.items = pop_mark();
        push(std::move(v));
        break;
      }
      case '}': push(make(K::Dict)); break;  // EMPTY_DICT
      case 'd': {                            // DICT
        std::vector<size_t> kv = pop_mark();
        push(make(K::Dict));
        setitems(stack.back(), kv);
        break;
      }
      case 0x8f: push(make(K::Set)); break;  // EMPTY_SET
      case 0x91: {                           // FROZENSET
        PickleValue v = make(K::Set);
        v.items = pop_mark();
        push(std::move(v));
        break;
      }
      case 'a': {  // APPEND
        size_t x = pop();
        container(top(), K::List, "APPEND").items.push_back(x);
        break;
      }
      case 'e': {  // APPENDS
        std::vector<size_t> xs = pop_mark();
        PickleValue& l = container(top(), K::List, "APPENDS");
        l.items.insert(l.items.end(), xs.begin(), xs.end());
        break;
      }
      case 0x90: {  // ADDITEMS
        std::vector<size_t> xs = pop_mark();
        PickleValue& l = container(top(), K::Set, "ADDITEMS");
        l.items.insert(l.items.end(), xs.begin(), xs.end());
        break;
      }
      case 's': {  // SETITEM
        size_t v = pop(), k = pop();
        setitems(top(), {k, v});
        break;
      }
      case 'u': {  // SETITEMS
        std::vector<size_t> kv = pop_mark();
        setitems(top(), kv);
        break;
      }
      case 'q': put(uint(1)); break;        // BINPUT
      case 'r': put(uint(4)); break;        // LONG_BINPUT
      case 0x94: put(memo.size()); break;   // MEMOIZE
      case 'h': get(uint(1)); break;        // BINGET
      case 'j': get(uint(4)); break;        // LONG_BINGET
      case 'p': case 'g': {                 // PUT, GET (text)
        std::string s = line();
        uint64_t i = 0;
        for (char c : s) {
          if (c < '0' || c > '9' || i > (1u << 28)) fail("memo index '" + s + "' in the pickle is not a small number");
          i = i * 10 + static_cast<uint64_t>(c - '0');
        }
        op == 'p' ? put(i) : get(i);
        break;
      }
      case 'c': {  // GLOBAL: "module\nname\n"
        std::string module = line(), name = line();
        if (!hooks_.find_class) fail("the pickle refers to " + module + "." + name + ", which is not allowed here");
        stack.push_back(hooks_.find_class(*this, module, name));
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        size_t name = pop(), module = pop();
        if (values[name].kind != K::Str || values[module].kind != K::Str) fail("STACK_GLOBAL of values that are not strings (malformed)");
        if (!hooks_.find_class) fail("the pickle refers to " + values[module].s + "." + values[name].s + ", which is not allowed here");
        std::string m = values[module].s, n = values[name].s;
        stack.push_back(hooks_.find_class(*this, m, n));
        break;
      }
      case 'R': {  // REDUCE: callable(*args)
        size_t args = pop(), callable = pop();
        call(callable, args);
        break;
      }
      case 0x81: {  // NEWOBJ: cls.__new__(cls, *args)
        size_t args = pop(), cls = pop();
        call(cls, args);
        break;
      }
      case 0x92: {  // NEWOBJ_EX: cls, args, kwargs
        size_t kwargs = pop(), args = pop(), cls = pop();
        if (values[kwargs].kind != K::Dict || !values[kwargs].items.empty()) fail("NEWOBJ_EX with keyword arguments is not supported");
        call(cls, args);
        break;
      }
      case 'b': {  // BUILD: obj.__setstate__(state)
        size_t state = pop(), obj = top();
        if (hooks_.build) hooks_.build(*this, obj, state);
        else if (values[obj].kind != K::Dict) fail("the pickle sets the state of an object, which is not allowed here");
        break;
      }
      case 'Q': {  // BINPERSID
        size_t pid = pop();
        if (!hooks_.persistent_load) fail("the pickle refers to data outside it (a persistent id), which is not allowed here");
        stack.push_back(hooks_.persistent_load(*this, pid));
        break;
      }
      case 'P': {  // PERSID (text)
        push_str(K::Str, line());
        size_t pid = pop();
        if (!hooks_.persistent_load) fail("the pickle refers to data outside it (a persistent id), which is not allowed here");
        stack.push_back(hooks_.persistent_load(*this, pid));
        break;
      }
      case 'i': case 'o':  // INST, OBJ: old-style class instances
        fail(std::string("the pickle builds a class instance with ") + (op == 'i' ? "INST" : "OBJ") + ", which is not allowed here");
      case 0x82: case 0x83: case 0x84:  // EXT1, EXT2, EXT4: the copyreg extension registry
        fail("the pickle uses the extension registry (EXT opcodes), which is not allowed here");
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        fail(std::string("unknown pickle opcode ") + hex + " at offset " + std::to_string(pos_ - 1) + " (not a pickle, or a corrupt one)");
      }
    }
  }
}

}  // namespace tg::nn::detail

// NumPy .npy load/save: "\x93NUMPY", version (1.0: 2-byte header length, 2.0/3.0: 4-byte), a Python dict
// literal {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded to 64 bytes, then the data.
#include <cctype>
#include <cstring>
#include <limits>

#include "nn/bytes.h"
#include "tg/state.h"

namespace tg::nn::state {

namespace {

const char kMagic[] = "\x93NUMPY";

// (kind, itemsize) <-> DType, as NumPy's type codes.
const std::vector<std::pair<std::string, DType>>& npy_codes() {
  static const std::vector<std::pair<std::string, DType>> t = {
      {"b1", dtypes::bool_}, {"i1", dtypes::int8},  {"u1", dtypes::uint8},  {"i2", dtypes::int16},   {"u2", dtypes::uint16},
      {"i4", dtypes::int32}, {"u4", dtypes::uint32}, {"i8", dtypes::int64}, {"u8", dtypes::uint64},  {"f2", dtypes::float16},
      {"f4", dtypes::float32}, {"f8", dtypes::float64}};
  return t;
}

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
  bool has_descr = false, has_fortran = false, has_shape = false;
};

// A reader for the small subset of Python literals NumPy writes in the header.
class HeaderParser {
 public:
  HeaderParser(const std::string& s, const std::string& path) : s_(s), path_(path) {}
  NpyHeader parse() {
    NpyHeader h;
    expect('{');
    while (peek() != '}') {
      std::string key = string();
      expect(':');
      if (key == "descr") {
        TG_CHECK(peek() == '\'' || peek() == '"', "npy_load: ", path_, ": descr ", rest(), " is not a simple dtype string (structured dtypes are not supported)");
        h.descr = string(), h.has_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean(), h.has_fortran = true;
      } else if (key == "shape") {
        h.shape = tuple(), h.has_shape = true;
      } else {
        fail("unknown key '" + key + "'");
      }
      if (peek() == ',') i_++;
      else if (peek() != '}') fail("expected ',' or '}'");
    }
    i_++;
    TG_CHECK(h.has_descr && h.has_fortran && h.has_shape, "npy_load: ", path_, ": header ", s_, " lacks descr, fortran_order or shape");
    return h;
  }

 private:
  const std::string& s_;
  const std::string& path_;
  size_t i_ = 0;
  [[noreturn]] void fail(const std::string& why) { TG_ERROR("npy_load: ", path_, ": malformed header ", s_, ": ", why); }
  std::string rest() const { return s_.substr(i_, 20); }
  char peek() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) i_++;
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    i_++;
  }
  std::string string() {
    char q = peek();
    if (q != '\'' && q != '"') fail("expected a string");
    size_t end = s_.find(q, ++i_);
    if (end == std::string::npos) fail("unterminated string");
    std::string r = s_.substr(i_, end - i_);
    i_ = end + 1;
    return r;
  }
  bool boolean() {
    peek();
    for (const char* w : {"True", "False"})
      if (s_.compare(i_, std::strlen(w), w) == 0) { i_ += std::strlen(w); return w[0] == 'T'; }
    fail("expected True or False");
  }
  Shape tuple() {
    expect('(');
    Shape r;
    while (peek() != ')') {
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("shape entries must be non-negative integers");
      int64_t v = 0;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s_[i_++] - '0', &v)) fail("shape entry too large");
      }
      if (i_ < s_.size() && s_[i_] == 'L') i_++;  // Python 2 longs
      r.push_back(v);
      if (peek() == ',') i_++;
      else if (peek() != ')') fail("expected ',' or ')' in shape");
    }
    i_++;
    return r;
  }
};

DType dtype_of_descr(const std::string& descr, const std::string& path) {
  TG_CHECK(descr.size() >= 2, "npy_load: ", path, ": unknown dtype '", descr, "'");
  char order = descr[0];
  std::string code = std::string("<|=>").find(order) != std::string::npos ? descr.substr(1) : descr;
  for (const auto& [c, d] : npy_codes()) {
    if (c != code) continue;
    TG_CHECK(order != '>' || d.itemsize() == 1, "npy_load: ", path, ": big-endian dtype '", descr, "' is not supported");
    return d;
  }
  TG_ERROR("npy_load: ", path, ": unsupported dtype '", descr, "' (supported: bool, int8-64, uint8-64, float16/32/64)");
}

std::string descr_of(DType d) {
  for (const auto& [c, t] : npy_codes())
    if (t == d) return (d.itemsize() == 1 ? "|" : "<") + c;
  TG_ERROR("npy_save: dtype ", d.name(), " has no .npy code");
}

}  // namespace

Tensor npy_load(const std::string& path) {
  detail::InFile f(path, "npy_load");
  char magic[8];
  f.read_at(0, magic, 8, "the magic string and version");
  TG_CHECK(std::memcmp(magic, kMagic, 6) == 0, "npy_load: ", path, " is not a .npy file (bad magic string)");
  uint8_t major = static_cast<uint8_t>(magic[6]);
  TG_CHECK(major >= 1 && major <= 3, "npy_load: ", path, ": unsupported format version ", int(major), ".", int(uint8_t(magic[7])));
  uint64_t hlen = 0, hstart = major == 1 ? 10 : 12;
  f.read_at(8, &hlen, hstart - 8, "the header length");  // little-endian into a zeroed uint64
  // checked against the file before allocating: a corrupt length must not cost gigabytes
  TG_CHECK(hlen <= f.size() - hstart, "npy_load: ", path, " is truncated: header length ", hlen, " runs past the end of the file (",
           f.size(), " bytes)");
  std::string text(hlen, '\0');
  f.read_at(hstart, text.data(), hlen, "the header");
  NpyHeader h = HeaderParser(text, path).parse();
  TG_CHECK(!h.fortran_order, "npy_load: ", path, ": fortran_order=True is not supported; save a C-contiguous array");
  DType dtype = dtype_of_descr(h.descr, path);
  int64_t nbytes = detail::checked_nbytes(h.shape, dtype.itemsize());
  TG_CHECK(nbytes >= 0, "npy_load: ", path, ": shape ", h.shape, " is too large");
  uint64_t avail = f.size() - (hstart + hlen);
  TG_CHECK(avail == static_cast<uint64_t>(nbytes), "npy_load: ", path, ": shape ", h.shape, " of ", dtype.name(), " needs ",
           nbytes, " bytes of data but the file has ", avail);
  std::vector<uint8_t> raw(static_cast<size_t>(nbytes));
  f.read_at(hstart + hlen, raw.data(), raw.size(), "the data");
  return Tensor::from_host(raw.data(), raw.size() / static_cast<size_t>(dtype.itemsize()), h.shape, dtype);
}

void npy_save(const Tensor& t, const std::string& path) {
  std::string shape = "(";
  for (int64_t d : t.shape()) shape += std::to_string(d) + ", ";
  if (t.ndim() > 0) shape.resize(shape.size() - (t.ndim() == 1 ? 1 : 2));  // (3,) and (3, 4), as Python prints
  shape += ")";
  std::string dict = "{'descr': '" + descr_of(t.dtype()) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // pad with spaces and end with '\n' so the data starts on a 64-byte boundary
  size_t prefix = dict.size() + 64 + 10 > std::numeric_limits<uint16_t>::max() ? 12 : 10;
  dict.append((64 - (prefix + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  detail::OutFile f(path, "npy_save");
  f.write(kMagic, 6);
  uint8_t version[2] = {static_cast<uint8_t>(prefix == 10 ? 1 : 2), 0};
  f.write(version, 2);
  uint32_t hlen = static_cast<uint32_t>(dict.size());
  f.write(&hlen, prefix - 8);  // little-endian: the low 2 (or 4) bytes
  f.write(dict);
  f.write(t.bytes());
  f.close();
}

}  // namespace tg::nn::state

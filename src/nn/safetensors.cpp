// safetensors load/save (https://github.com/huggingface/safetensors): an 8-byte little-endian header
// length N, N bytes of JSON {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}},
// then the data, offsets relative to its start. Every field is validated before any data is read.
#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "nn/bytes.h"
#include "tg/state.h"

namespace tg::nn::state {

using nlohmann::json;
using detail::InFile;

namespace {

constexpr uint64_t kMaxHeader = 100'000'000;  // the format's own limit, guards huge allocations
constexpr DType kBF16Marker{Scalar::Void};    // BF16 has no tg dtype: it is widened to float32

const std::vector<std::pair<std::string, DType>>& safe_dtypes() {
  static const std::vector<std::pair<std::string, DType>> t = {
      {"BOOL", dtypes::bool_},  {"I8", dtypes::int8},     {"U8", dtypes::uint8},     {"I16", dtypes::int16},
      {"U16", dtypes::uint16},  {"I32", dtypes::int32},   {"U32", dtypes::uint32},   {"I64", dtypes::int64},
      {"U64", dtypes::uint64},  {"F16", dtypes::float16}, {"F32", dtypes::float32},  {"F64", dtypes::float64},
      {"BF16", kBF16Marker}};
  return t;
}

struct Entry {
  std::string name;
  DType dtype;  // kBF16Marker for BF16
  Shape shape;
  uint64_t begin, end;
};
struct Header {
  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;
};

std::map<std::string, std::string> parse_metadata(const json& v, const std::string& path) {
  TG_CHECK(v.is_object(), "safe_load: ", path, ": __metadata__ must be an object of strings");
  std::map<std::string, std::string> md;
  for (const auto& [k, s] : v.items()) {
    TG_CHECK(s.is_string(), "safe_load: ", path, ": __metadata__ value of '", k, "' is not a string");
    md[k] = s.get<std::string>();
  }
  return md;
}

Entry parse_entry(const std::string& name, const json& v, const std::string& path) {
  auto bad = [&](const std::string& why) { TG_ERROR("safe_load: ", path, ": tensor '", name, "': ", why); };
  if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
    bad("needs an object with dtype, shape and data_offsets");
  const json &jd = v["dtype"], &js = v["shape"], &jo = v["data_offsets"];
  if (!jd.is_string()) bad("dtype is not a string");
  std::string dn = jd.get<std::string>();
  auto it = std::find_if(safe_dtypes().begin(), safe_dtypes().end(), [&](const auto& p) { return p.first == dn; });
  if (it == safe_dtypes().end()) bad("unknown dtype '" + dn + "'");
  Entry e{name, it->second, {}, 0, 0};
  if (!js.is_array()) bad("shape is not an array");
  for (const json& d : js) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      bad("shape " + js.dump() + " has an entry that is not a non-negative integer");
    e.shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
  }
  if (!jo.is_array() || jo.size() != 2 || !jo[0].is_number_unsigned() || !jo[1].is_number_unsigned())
    bad("data_offsets " + jo.dump() + " is not a pair of non-negative integers");
  e.begin = jo[0].get<uint64_t>();
  e.end = jo[1].get<uint64_t>();
  if (e.end < e.begin) bad("data_offsets " + jo.dump() + " end before they begin");
  int64_t itemsize = e.dtype == kBF16Marker ? 2 : e.dtype.itemsize();
  int64_t nbytes = detail::checked_nbytes(e.shape, itemsize);
  if (nbytes < 0 || static_cast<uint64_t>(nbytes) != e.end - e.begin)
    bad("shape " + js.dump() + " of " + dn + " needs " + (nbytes < 0 ? std::string("too many") : std::to_string(nbytes)) +
        " bytes but data_offsets " + jo.dump() + " hold " + std::to_string(e.end - e.begin));
  return e;
}

// The data region must be exactly tiled by the tensors: no gap, no overlap, nothing past its end.
void check_coverage(std::vector<Entry> es, uint64_t data_size, const std::string& path) {
  std::sort(es.begin(), es.end(), [](const Entry& a, const Entry& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
  uint64_t pos = 0;
  std::string prev = "the start of the data";
  for (const Entry& e : es) {
    TG_CHECK(e.begin >= pos, "safe_load: ", path, ": tensor '", e.name, "' at bytes [", e.begin, ", ", e.end, ") overlaps ", prev);
    TG_CHECK(e.begin == pos, "safe_load: ", path, ": bytes [", pos, ", ", e.begin, ") between ", prev, " and tensor '", e.name,
             "' belong to no tensor");
    TG_CHECK(e.end <= data_size, "safe_load: ", path, ": tensor '", e.name, "' at bytes [", e.begin, ", ", e.end,
             ") runs past the end of the data (", data_size, " bytes)");
    if (e.end > e.begin) { pos = e.end; prev = "tensor '" + e.name + "'"; }
  }
  TG_CHECK(pos == data_size, "safe_load: ", path, ": the data has ", data_size, " bytes but the tensors cover only ", pos);
}

Header read_header(InFile& f) {
  const std::string& path = f.path();
  uint64_t n = 0;
  f.read_at(0, &n, 8, "the 8-byte header length");
  TG_CHECK(n <= f.size() - 8, "safe_load: ", path, ": header length ", n, " runs past the end of the file (", f.size(), " bytes)");
  TG_CHECK(n <= kMaxHeader, "safe_load: ", path, ": header length ", n, " is over the format's limit of ", kMaxHeader);
  std::string text(n, '\0');
  f.read_at(8, text.data(), n, "the JSON header");
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  TG_CHECK(!j.is_discarded(), "safe_load: ", path, ": the header is not valid JSON");
  TG_CHECK(j.is_object(), "safe_load: ", path, ": the header is not a JSON object");
  Header h;
  h.data_start = 8 + n;
  for (const auto& [k, v] : j.items()) {
    if (k == "__metadata__") h.metadata = parse_metadata(v, path);
    else h.entries.push_back(parse_entry(k, v, path));
  }
  check_coverage(h.entries, f.size() - h.data_start, path);
  return h;
}

Tensor load_entry(InFile& f, const Header& h, const Entry& e) {
  std::vector<uint8_t> raw(e.end - e.begin);
  f.read_at(h.data_start + e.begin, raw.data(), raw.size(), "tensor '" + e.name + "'");
  if (e.dtype != kBF16Marker) return Tensor::from_host(raw.data(), raw.size() / static_cast<size_t>(e.dtype.itemsize()), e.shape, e.dtype);
  std::vector<uint32_t> wide(raw.size() / 2);  // bfloat16 is the top half of a float32
  for (size_t i = 0; i < wide.size(); i++) wide[i] = static_cast<uint32_t>(raw[2 * i] | raw[2 * i + 1] << 8) << 16;
  return Tensor::from_host(wide.data(), wide.size(), e.shape, dtypes::float32);
}

std::string safe_name(DType d, const std::string& name) {
  for (const auto& [n, t] : safe_dtypes())
    if (t == d && t != kBF16Marker) return n;
  TG_ERROR("safe_save: tensor '", name, "' has dtype ", d.name(), ", which safetensors cannot hold");
}

}  // namespace

std::map<std::string, Tensor> safe_load(const std::string& path) {
  InFile f(path, "safe_load");
  Header h = read_header(f);
  std::map<std::string, Tensor> out;
  for (const Entry& e : h.entries) out.emplace(e.name, load_entry(f, h, e));
  return out;
}

std::map<std::string, std::string> safe_load_metadata(const std::string& path) {
  InFile f(path, "safe_load");
  return read_header(f).metadata;
}

void safe_save(const std::map<std::string, Tensor>& tensors, const std::string& path,
               const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    TG_CHECK(name != "__metadata__", "safe_save: '__metadata__' is reserved and cannot name a tensor");
    uint64_t nb = static_cast<uint64_t>(t.nbytes());
    header[name] = {{"dtype", safe_name(t.dtype(), name)}, {"shape", t.shape()}, {"data_offsets", {offset, offset + nb}}};
    offset += nb;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // aligns the data to 8 bytes, as tinygrad and the reference writer
  uint64_t n = text.size();
  detail::OutFile f(path, "safe_save");
  f.write(&n, 8);
  f.write(text);
  for (const auto& [name, t] : tensors) f.write(t.bytes());
  f.close();
}

}  // namespace tg::nn::state

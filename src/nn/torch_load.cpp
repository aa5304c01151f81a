// torch_load: the files torch.save writes (.pth, .pt), read without torch and without running the pickle.
//
// Two containers: the zip archive of torch >= 1.6 (<name>/data.pkl, the pickle, and <name>/data/<key>,
// one stored member per storage), and the legacy stream (_use_new_zipfile_serialization=False): a magic
// number, a protocol version and system info, each a pickle, then the object's pickle, then the pickled
// list of storage keys and, per key, its element count (int64) and its bytes. In both the object's pickle
// names storages by persistent ids ('storage', torch.FloatStorage, key, location, numel) and rebuilds each
// tensor with torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...). The pickle reader
// (nn/pickle.h) runs nothing: the names below are the only ones a file may use, and each is implemented
// here; any other (os.system, builtins.eval, a model's own class) is a tg::Error naming it.
#include "nn/torch_load.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "nn/bytes.h"
#include "nn/zip.h"
#include "tg/state.h"

namespace tg::nn::detail {

namespace {

using K = PickleValue::Kind;
constexpr const char* kWhat = "torch_load";
constexpr DType kBF16{Scalar::Void};  // bfloat16 has no tg dtype: widened to float32, as safe_load does

// torch's typed storage classes, as persistent ids name them
std::optional<DType> storage_dtype(const std::string& name) {
  static const std::map<std::string, DType> t = {
      {"FloatStorage", dtypes::float32}, {"DoubleStorage", dtypes::float64}, {"HalfStorage", dtypes::float16},
      {"BFloat16Storage", kBF16},        {"LongStorage", dtypes::int64},     {"IntStorage", dtypes::int32},
      {"ShortStorage", dtypes::int16},   {"CharStorage", dtypes::int8},      {"ByteStorage", dtypes::uint8},
      {"BoolStorage", dtypes::bool_}};
  auto it = t.find(name);
  return it == t.end() ? std::nullopt : std::optional<DType>(it->second);
}

struct StorageRef {
  DType dtype;
  std::string key;
  int64_t numel;
  int64_t itemsize() const { return dtype == kBF16 ? 2 : dtype.itemsize(); }
};
struct TensorRef {
  size_t storage;
  int64_t offset;
  Shape size, stride;
};

// The state of one load: what the pickle referred to, and the hooks that let it.
struct Loader {
  std::string path;
  std::vector<StorageRef> storages;
  std::map<std::string, size_t> storage_by_key;
  std::vector<TensorRef> tensors;

  std::string where() const { return std::string(kWhat) + ": " + path; }

  size_t object(Pickle& p, const char* kind, size_t index) {
    PickleValue v;
    v.kind = K::Object;
    v.s = kind;
    v.i = static_cast<int64_t>(index);
    return p.add(v);
  }

  size_t find_class(Pickle& p, const std::string& module, const std::string& name) {
    static const char* allowed[] = {
        "collections.OrderedDict", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor", "torch._utils._rebuild_parameter",
        "torch._utils._rebuild_parameter_with_state", "torch._tensor._rebuild_from_type_v2", "torch.nn.parameter.Parameter",
        "torch.Tensor", "torch._tensor.Tensor", "_codecs.encode", "torch.device"};
    std::string full = module + "." + name;
    bool ok = std::find_if(std::begin(allowed), std::end(allowed), [&](const char* a) { return full == a; }) != std::end(allowed);
    ok = ok || (module == "torch" && storage_dtype(name));
    if (!ok) {
      bool storage = module == "torch" && name.size() > 7 && name.compare(name.size() - 7, 7, "Storage") == 0;
      p.fail(storage ? "storage type torch." + name + " is not supported (float, double, half, bfloat16, long, int, short, char, byte and bool are)"
                     : "the pickle refers to " + full + ", which torch_load does not allow: it reads tensors, storages and "
                       "containers only, and never runs code from a file (a file that names other functions or classes "
                       "is not a plain state dict, or is malicious)");
    }
    PickleValue v;
    v.kind = K::Global;
    v.s = full;
    return p.add(v);
  }

  const PickleValue& arg(const Pickle& p, size_t args, size_t i, K kind, const char* fn, const char* what) {
    const PickleValue& a = p.at(args);
    if (i >= a.items.size()) p.fail(std::string(fn) + " is called with " + std::to_string(a.items.size()) + " arguments (malformed)");
    const PickleValue& v = p.at(a.items[i]);
    if (v.kind != kind || (kind == K::Int && v.big)) p.fail(std::string(fn) + ": its " + what + " has the wrong type (malformed)");
    return v;
  }

  Shape ints(const Pickle& p, const PickleValue& tuple, const char* fn, const char* what) {
    Shape s;
    for (size_t i : tuple.items) {
      const PickleValue& v = p.at(i);
      if (v.kind != K::Int || v.big) p.fail(std::string(fn) + ": its " + what + " holds something that is not an int (malformed)");
      s.push_back(v.i);
    }
    return s;
  }

  size_t rebuild_tensor(Pickle& p, size_t args, const char* fn) {
    const PickleValue& st = p.at(p.at(args).items.empty() ? args : p.at(args).items[0]);
    if (st.kind != K::Object || st.s != "storage") p.fail(std::string(fn) + ": its first argument is not a storage (malformed)");
    int64_t offset = arg(p, args, 1, K::Int, fn, "storage offset").i;
    Shape size = ints(p, arg(p, args, 2, K::Tuple, fn, "size"), fn, "size");
    Shape stride = ints(p, arg(p, args, 3, K::Tuple, fn, "stride"), fn, "stride");
    if (size.size() != stride.size()) p.fail(std::string(fn) + ": size and stride differ in length (malformed)");
    tensors.push_back({static_cast<size_t>(st.i), offset, size, stride});
    return object(p, "tensor", tensors.size() - 1);
  }

  size_t call(Pickle& p, size_t callable, size_t args) {
    const PickleValue& c = p.at(callable);
    if (c.kind != K::Global) p.fail("the pickle calls a value that is not a function (malformed)");
    const std::string fn = c.s;
    const PickleValue& a = p.at(args);
    if (fn == "collections.OrderedDict") {
      if (!a.items.empty()) p.fail("OrderedDict is called with arguments, which torch_load does not read");
      PickleValue d;
      d.kind = K::Dict;
      return p.add(d);
    }
    if (fn == "torch._utils._rebuild_tensor_v2" || fn == "torch._utils._rebuild_tensor") return rebuild_tensor(p, args, fn.c_str());
    if (fn == "torch._utils._rebuild_parameter" || fn == "torch._utils._rebuild_parameter_with_state") {
      const PickleValue& t = p.at(a.items.empty() ? args : a.items[0]);
      if (a.items.empty() || t.kind != K::Object || t.s != "tensor") p.fail(fn + ": its first argument is not a tensor (malformed)");
      return a.items[0];  // a Parameter is its tensor
    }
    if (fn == "torch._tensor._rebuild_from_type_v2") {  // (func, type, args, state): func(*args), the type dropped
      if (a.items.size() < 3 || p.at(a.items[2]).kind != K::Tuple) p.fail(fn + " is called with the wrong arguments (malformed)");
      return call(p, a.items[0], a.items[2]);
    }
    if (fn == "_codecs.encode") {  // bytes pickled by protocol 2: encode(text, "latin1")
      const PickleValue& s = arg(p, args, 0, K::Str, "_codecs.encode", "text");
      PickleValue b;
      b.kind = K::Bytes;
      for (size_t i = 0; i < s.s.size(); i++) {  // UTF-8 code points below 256 -> one byte each
        auto u = static_cast<uint8_t>(s.s[i]);
        if (u < 0x80) b.s += static_cast<char>(u);
        else if ((u & 0xE0) == 0xC0 && i + 1 < s.s.size()) b.s += static_cast<char>(((u & 0x1F) << 6) | (static_cast<uint8_t>(s.s[++i]) & 0x3F));
        else p.fail("_codecs.encode: a character outside latin1 (malformed)");
      }
      return p.add(b);
    }
    if (fn == "torch.device") {  // a device is its name: tensors load onto tg's default device
      if (a.items.empty()) p.fail("torch.device without arguments (malformed)");
      return a.items[0];
    }
    p.fail("the pickle calls " + fn + ", which torch_load does not run");
  }

  void build(Pickle& p, size_t obj, size_t) {
    const PickleValue& o = p.at(obj);
    // an OrderedDict's attributes (a state dict's _metadata) and a tensor's Python state are not data
    if (o.kind == K::Dict || (o.kind == K::Object && o.s == "tensor")) return;
    p.fail("the pickle sets the state of an object that is not a dict or tensor, which torch_load does not do");
  }

  size_t persistent_load(Pickle& p, size_t pid) {
    const PickleValue& t = p.at(pid);
    if (t.kind != K::Tuple || t.items.empty() || p.at(t.items[0]).kind != K::Str) p.fail("a persistent id that is not a tuple (malformed)");
    const std::string& tag = p.at(t.items[0]).s;
    if (tag == "module") p.fail("the file holds a whole pickled nn.Module (its source code), not a state dict; save model.state_dict()");
    if (tag != "storage" || t.items.size() < 5) p.fail("persistent id '" + tag + "' is not a storage (malformed)");
    const PickleValue &type = p.at(t.items[1]), &key = p.at(t.items[2]), &numel = p.at(t.items[4]);
    if (type.kind != K::Global || key.kind != K::Str || numel.kind != K::Int || numel.big || numel.i < 0)
      p.fail("a storage's persistent id has fields of the wrong types (malformed)");
    if (t.items.size() > 5 && p.at(t.items[5]).kind != K::None) p.fail("storage views (a legacy format of old torch) are not supported");
    std::optional<DType> d = storage_dtype(type.s.substr(type.s.rfind('.') + 1));
    if (!d) p.fail("persistent id names " + type.s + ", which is not a storage type");
    auto [it, fresh] = storage_by_key.emplace(key.s, storages.size());
    if (fresh) storages.push_back({*d, key.s, numel.i});
    else if (storages[it->second].dtype != *d || storages[it->second].numel != numel.i)
      p.fail("storage '" + key.s + "' is named with two different types or sizes (malformed)");
    return object(p, "storage", it->second);
  }

  Pickle::Hooks hooks() {
    return {[this](Pickle& p, const std::string& m, const std::string& n) { return find_class(p, m, n); },
            [this](Pickle& p, size_t c, size_t a) { return call(p, c, a); },
            [this](Pickle& p, size_t o, size_t s) { build(p, o, s); },
            [this](Pickle& p, size_t pid) { return persistent_load(p, pid); }};
  }

  // One tensor: its elements read from the storage (whose data starts at file offset `data`), strided
  // as the file says; bfloat16 widened to float32.
  Tensor materialize(InFile& f, const TensorRef& t, uint64_t data) {
    const StorageRef& s = storages[t.storage];
    int64_t item = s.itemsize();
    DType dt = s.dtype == kBF16 ? dtypes::float32 : s.dtype;
    int64_t n = checked_nbytes(t.size, 1);
    TG_CHECK(n >= 0, where(), ": a tensor of storage '", s.key, "' has an invalid size ", t.size);
    if (n == 0) return Tensor::from_host(nullptr, 0, t.size, dt);
    // the last element read, checked against the storage: offset + sum((size - 1) * stride)
    int64_t last = t.offset;
    bool bad = t.offset < 0;
    for (size_t d = 0; d < t.size.size(); d++) {
      int64_t step = 0;
      bad = bad || t.stride[d] < 0 || __builtin_mul_overflow(t.size[d] - 1, t.stride[d], &step) || __builtin_add_overflow(last, step, &last);
    }
    TG_CHECK(!bad && last < s.numel, where(), ": a tensor of shape ", t.size, " with stride ", t.stride, " at offset ", t.offset,
             " reads past the end of storage '", s.key, "' of ", s.numel, " elements");
    int64_t span = last - t.offset + 1;
    std::vector<uint8_t> raw(static_cast<size_t>(span * item));
    f.read_at(data + static_cast<uint64_t>(t.offset * item), raw.data(), raw.size(), "storage '" + s.key + "'");
    bool contiguous = span == n;
    for (int64_t d = static_cast<int64_t>(t.size.size()) - 1, want = 1; contiguous && d >= 0; d--) {
      if (t.size[d] != 1 && t.stride[d] != want) contiguous = false;
      want *= t.size[d];
    }
    std::vector<uint8_t> out;
    if (contiguous) {
      out = std::move(raw);
    } else {  // gather the strided elements in C order
      out.resize(static_cast<size_t>(n * item));
      std::vector<int64_t> idx(t.size.size(), 0);
      for (int64_t i = 0; i < n; i++) {
        int64_t at = 0;
        for (size_t d = 0; d < idx.size(); d++) at += idx[d] * t.stride[d];
        std::memcpy(&out[static_cast<size_t>(i * item)], &raw[static_cast<size_t>(at * item)], static_cast<size_t>(item));
        for (size_t d = idx.size(); d-- > 0;) {
          if (++idx[d] < t.size[d]) break;
          idx[d] = 0;
        }
      }
    }
    if (s.dtype != kBF16) return Tensor::from_host(out.data(), static_cast<size_t>(n), t.size, dt);
    std::vector<uint32_t> wide(static_cast<size_t>(n));  // bfloat16 is the top half of a float32
    for (size_t i = 0; i < wide.size(); i++) wide[i] = static_cast<uint32_t>(out[2 * i] | out[2 * i + 1] << 8) << 16;
    return Tensor::from_host(wide.data(), wide.size(), t.size, dt);
  }
};

Pickle make_pickle(InFile& f, uint64_t begin, uint64_t end, Loader& l) {
  InFile* fp = &f;
  return Pickle([fp, begin](uint64_t off, void* out, uint64_t n) { fp->read_at(begin + off, out, n, "the pickle"); }, end - begin,
                l.where(), l.hooks());
}

TorchFile load_zip(InFile& f, Loader& l) {
  std::vector<ZipEntry> entries = zip_entries(f, kWhat);
  auto pkl = std::find_if(entries.begin(), entries.end(), [](const ZipEntry& e) {
    return e.name == "data.pkl" || (e.name.size() > 9 && e.name.compare(e.name.size() - 9, 9, "/data.pkl") == 0);
  });
  TG_CHECK(pkl != entries.end(), l.where(), ": a zip archive without data.pkl: not a file torch.save wrote");
  std::string prefix = pkl->name.substr(0, pkl->name.size() - 8);
  auto member = [&](const std::string& name) -> const ZipEntry* {
    for (const ZipEntry& e : entries)
      if (e.name == prefix + name) return &e;
    return nullptr;
  };
  if (const ZipEntry* bo = member("byteorder")) {
    std::string order(static_cast<size_t>(std::min<uint64_t>(bo->size, 16)), '\0');
    f.read_at(zip_data_offset(f, *bo, kWhat), order.data(), order.size(), "byteorder");
    TG_CHECK(order == "little", l.where(), ": the tensors are stored ", order, "-endian; only little-endian files are read");
  }
  uint64_t at = zip_data_offset(f, *pkl, kWhat);
  Pickle p = make_pickle(f, at, at + pkl->size, l);
  TorchFile out;
  out.root = p.load(0);
  std::vector<uint64_t> data(l.storages.size());
  for (size_t i = 0; i < l.storages.size(); i++) {
    const StorageRef& s = l.storages[i];
    const ZipEntry* e = member("data/" + s.key);
    TG_CHECK(e, l.where(), ": storage '", s.key, "' has no member ", prefix, "data/", s.key, " (truncated archive?)");
    TG_CHECK(e->size / static_cast<uint64_t>(s.itemsize()) >= static_cast<uint64_t>(s.numel), l.where(), ": storage '", s.key, "' holds ",
             e->size, " bytes, fewer than its ", s.numel, " elements need");
    data[i] = zip_data_offset(f, *e, kWhat);
  }
  for (const TensorRef& t : l.tensors) out.tensors.push_back(l.materialize(f, t, data[t.storage]));
  out.values = std::move(p.values);
  return out;
}

TorchFile load_legacy(InFile& f, Loader& l) {
  Pickle p = make_pickle(f, 0, f.size(), l);
  const PickleValue& magic = p.at(p.load(0));
  static const std::string kMagic("\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 10);
  TG_CHECK(magic.kind == K::Int && magic.big && magic.s == kMagic, l.where(),
           ": not a file torch.save wrote (no zip archive, and no legacy magic number)");
  const PickleValue& version = p.at(p.load(p.pos()));
  TG_CHECK(version.kind == K::Int && version.i == 1001, l.where(), ": legacy format version ", version.i, " is not supported (1001 is)");
  const PickleValue& info = p.at(p.load(p.pos()));
  for (size_t j = 0; info.kind == K::Dict && j + 1 < info.items.size(); j += 2) {
    const PickleValue &k = p.at(info.items[j]), &v = p.at(info.items[j + 1]);
    TG_CHECK(!(k.kind == K::Str && k.s == "little_endian" && v.kind == K::Bool && !v.i), l.where(),
             ": the tensors are stored big-endian; only little-endian files are read");
  }
  TorchFile out;
  out.root = p.load(p.pos());
  const PickleValue& keys = p.at(p.load(p.pos()));
  TG_CHECK(keys.kind == K::List, l.where(), ": the list of storage keys is missing or malformed");
  // then each storage in the list's order: its element count (int64) and its bytes
  uint64_t at = p.pos();
  std::vector<uint64_t> data(l.storages.size(), 0);
  std::vector<bool> seen(l.storages.size(), false);
  for (size_t k : keys.items) {
    const PickleValue& key = p.at(k);
    TG_CHECK(key.kind == K::Str, l.where(), ": a storage key that is not a string (malformed)");
    auto it = l.storage_by_key.find(key.s);
    TG_CHECK(it != l.storage_by_key.end(), l.where(), ": storage '", key.s, "' is listed but no tensor names it (malformed)");
    const StorageRef& s = l.storages[it->second];
    int64_t n = 0;
    f.read_at(at, &n, 8, "the size of storage '" + key.s + "'");
    TG_CHECK(n == s.numel, l.where(), ": storage '", key.s, "' has ", n, " elements, its persistent id says ", s.numel);
    data[it->second] = at + 8;
    seen[it->second] = true;
    uint64_t nbytes = static_cast<uint64_t>(n) * static_cast<uint64_t>(s.itemsize());
    TG_CHECK(nbytes <= f.size() && at + 8 <= f.size() - nbytes, l.where(), " is truncated: storage '", key.s, "' needs ", nbytes,
             " bytes at offset ", at + 8, " of a file of ", f.size());
    at += 8 + nbytes;
  }
  for (size_t i = 0; i < seen.size(); i++)
    TG_CHECK(seen[i], l.where(), ": storage '", l.storages[i].key, "' is used but not stored in the file (truncated?)");
  for (const TensorRef& t : l.tensors) out.tensors.push_back(l.materialize(f, t, data[t.storage]));
  out.values = std::move(p.values);
  return out;
}

// name -> tensor for every tensor in v, walking dicts (string and int keys) and lists/tuples, names joined by ".".
void flatten(const TorchFile& tf, size_t v, const std::string& prefix, int depth, std::map<std::string, Tensor>& out, const std::string& path) {
  TG_CHECK(depth < 256, kWhat, ": ", path, ": the object is nested more than 256 levels deep");
  const PickleValue& x = tf.values[v];
  auto join = [&](const std::string& k) { return prefix.empty() ? k : prefix + "." + k; };
  if (x.kind == K::Object && x.s == "tensor") {
    out.insert_or_assign(prefix, tf.tensors[static_cast<size_t>(x.i)]);
  } else if (x.kind == K::Dict) {
    for (size_t j = 0; j + 1 < x.items.size(); j += 2) {
      const PickleValue& k = tf.values[x.items[j]];
      if (k.kind == K::Str) flatten(tf, x.items[j + 1], join(k.s), depth + 1, out, path);
      else if (k.kind == K::Int && !k.big) flatten(tf, x.items[j + 1], join(std::to_string(k.i)), depth + 1, out, path);
    }
  } else if (x.kind == K::List || x.kind == K::Tuple) {
    for (size_t j = 0; j < x.items.size(); j++) flatten(tf, x.items[j], join(std::to_string(j)), depth + 1, out, path);
  }
}

}  // namespace

TorchFile torch_load_file(const std::string& path) {
  InFile f(path, kWhat);
  Loader l;
  l.path = path;
  if (is_zip(f)) return load_zip(f, l);
  if (f.size() >= 262) {
    char ustar[5];
    f.read_at(257, ustar, 5, "the tar signature");
    TG_CHECK(std::string(ustar, 5) != "ustar", l.where(), ": the tar format of torch < 0.4 is not supported (re-save it with a newer torch)");
  }
  return load_legacy(f, l);
}

}  // namespace tg::nn::detail

namespace tg::nn::state {

std::map<std::string, Tensor> torch_load(const std::string& path) {
  detail::TorchFile tf = detail::torch_load_file(path);
  std::map<std::string, Tensor> out;
  detail::flatten(tf, tf.root, "", 0, out, path);
  return out;
}

}  // namespace tg::nn::state

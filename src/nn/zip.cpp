// The zip directory reader (see zip.h): the end of central directory record (searched for from the end,
// past an archive comment), its ZIP64 form when a count or offset overflows 32 bits, the central
// directory's entries and their ZIP64 extra fields, and each member's local header.
#include "nn/zip.h"

#include <algorithm>

namespace tg::nn::detail {

namespace {

constexpr uint32_t kLocal = 0x04034b50, kCentral = 0x02014b50, kEnd = 0x06054b50, kEnd64 = 0x06064b50, kLocator64 = 0x07064b50;

uint64_t le(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

}  // namespace

bool is_zip(InFile& f) {
  if (f.size() < 4) return false;
  uint8_t b[4];
  f.read_at(0, b, 4, "the file's signature");
  return le(b, 4) == kLocal;
}

std::vector<ZipEntry> zip_entries(InFile& f, const char* what) {
  // the end of central directory record: 22 bytes and a comment of up to 65535
  uint64_t tail = std::min<uint64_t>(f.size(), 22 + 65535);
  std::vector<uint8_t> t(tail);
  f.read_at(f.size() - tail, t.data(), tail, "the zip directory");
  size_t at = tail;
  for (size_t i = tail >= 22 ? tail - 22 + 1 : 0; i-- > 0;)
    if (le(&t[i], 4) == kEnd) { at = i; break; }
  TG_CHECK(at < tail, what, ": ", f.path(), " is not a complete zip archive (no end of central directory record; truncated?)");
  const uint8_t* e = &t[at];
  uint64_t count = le(e + 10, 2), cd_size = le(e + 12, 4), cd_offset = le(e + 16, 4);
  uint64_t end_at = f.size() - tail + at;
  if (count == 0xFFFF || cd_size == 0xFFFFFFFF || cd_offset == 0xFFFFFFFF) {  // ZIP64: the locator sits just before
    TG_CHECK(end_at >= 20, what, ": ", f.path(), ": a ZIP64 archive without its locator");
    uint8_t loc[20];
    f.read_at(end_at - 20, loc, 20, "the ZIP64 locator");
    TG_CHECK(le(loc, 4) == kLocator64, what, ": ", f.path(), ": a ZIP64 archive without its locator");
    uint8_t e64[56];
    f.read_at(le(loc + 8, 8), e64, 56, "the ZIP64 end of central directory");
    TG_CHECK(le(e64, 4) == kEnd64, what, ": ", f.path(), ": bad ZIP64 end of central directory record");
    count = le(e64 + 32, 8);
    cd_size = le(e64 + 40, 8);
    cd_offset = le(e64 + 48, 8);
  }
  TG_CHECK(cd_offset <= f.size() && cd_size <= f.size() - cd_offset, what, ": ", f.path(),
           " is truncated: its central directory lies past the end of the file");
  TG_CHECK(count <= cd_size / 46, what, ": ", f.path(), ": ", count, " entries cannot fit a central directory of ", cd_size, " bytes");
  std::vector<uint8_t> cd(cd_size);
  f.read_at(cd_offset, cd.data(), cd_size, "the central directory");
  std::vector<ZipEntry> out;
  size_t p = 0;
  for (uint64_t i = 0; i < count; i++) {
    TG_CHECK(p + 46 <= cd.size() && le(&cd[p], 4) == kCentral, what, ": ", f.path(), ": central directory entry ", i, " is malformed");
    const uint8_t* h = &cd[p];
    ZipEntry z;
    z.method = static_cast<uint16_t>(le(h + 10, 2));
    z.compressed_size = le(h + 20, 4);
    z.size = le(h + 24, 4);
    size_t name_len = le(h + 28, 2), extra_len = le(h + 30, 2), comment_len = le(h + 32, 2);
    z.local_header = le(h + 42, 4);
    TG_CHECK(p + 46 + name_len + extra_len + comment_len <= cd.size(), what, ": ", f.path(), ": central directory entry ", i,
             " runs past the directory");
    z.name.assign(reinterpret_cast<const char*>(h + 46), name_len);
    // ZIP64 extra field: the 64-bit values of the fields that hold 0xFFFFFFFF, in this order
    for (size_t x = 0; x + 4 <= extra_len;) {
      const uint8_t* ex = h + 46 + name_len + x;
      size_t id = le(ex, 2), len = le(ex + 2, 2);
      TG_CHECK(x + 4 + len <= extra_len, what, ": ", f.path(), ": a malformed extra field in entry '", z.name, "'");
      if (id == 1) {
        size_t q = 4;
        for (uint64_t* v : {&z.size, &z.compressed_size, &z.local_header}) {
          if (*v != 0xFFFFFFFF) continue;
          TG_CHECK(q + 8 <= 4 + len, what, ": ", f.path(), ": a short ZIP64 field in entry '", z.name, "'");
          *v = le(ex + q, 8);
          q += 8;
        }
      }
      x += 4 + len;
    }
    out.push_back(z);
    p += 46 + name_len + extra_len + comment_len;
  }
  return out;
}

uint64_t zip_data_offset(InFile& f, const ZipEntry& e, const char* what) {
  TG_CHECK(e.method == 0, what, ": ", f.path(), ": member '", e.name, "' is compressed (method ", e.method,
           "); only stored members are read (torch.save stores them)");
  uint8_t h[30];
  f.read_at(e.local_header, h, 30, "the local header of '" + e.name + "'");
  TG_CHECK(le(h, 4) == kLocal, what, ": ", f.path(), ": member '", e.name, "' has no local header at offset ", e.local_header);
  uint64_t data = e.local_header + 30 + le(h + 26, 2) + le(h + 28, 2);
  TG_CHECK(data <= f.size() && e.size <= f.size() - data, what, ": ", f.path(), " is truncated: member '", e.name, "' needs bytes [",
           data, ", ", data + e.size, ") of a file of ", f.size());
  return data;
}

}  // namespace tg::nn::detail

// A reader of zip archives' directories, for torch.save's files (stored, uncompressed members; ZIP64 for
// large ones). It lists the members and where each one's data starts; it decompresses nothing. Every
// offset and size is checked against the file: a truncated or malformed archive is a tg::Error. Not a
// public header.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nn/bytes.h"

namespace tg::nn::detail {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0: stored
  uint64_t size = 0, compressed_size = 0, local_header = 0;
};

// Whether the file begins with a zip local file header ("PK\3\4").
bool is_zip(InFile& f);
// The archive's members, from its central directory.
std::vector<ZipEntry> zip_entries(InFile& f, const char* what);
// Where a stored member's data starts (after its local header); a compressed member is a tg::Error.
uint64_t zip_data_offset(InFile& f, const ZipEntry& e, const char* what);

}  // namespace tg::nn::detail

// Test support: the cache's packs read and written from the format's description (the comment at
// the top of src/store/cache_packs.hpp), not with clef's own code, so that a test can look at
// what the cache stored and plant what a damaged or hostile pack holds.
#pragma once

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "clef/digest.hpp"

namespace clef::testing {

/// One entry as a pack holds it.
struct PackedEntry {
  std::string key;
  std::int64_t created = 0;
  std::string text;  ///< The entry's JSON.
};

/// The packs of the cache in `directory`, as paths, in name order.
inline std::vector<std::string> pack_paths(const std::string& directory) {
  std::vector<std::string> out;
  std::error_code ignored;
  for (const auto& item : std::filesystem::directory_iterator(directory + "/packs", ignored)) {
    const std::string name = item.path().filename().string();
    if (name.size() == 21 && name.compare(16, 5, ".pack") == 0) out.push_back(item.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// The entries of the pack at `path`; empty when it is not one.
inline std::vector<PackedEntry> read_pack(const std::string& path) {
  const std::string text = file_text(path);
  std::istringstream lines(text);
  std::string magic, version;
  std::size_t count = 0;
  lines >> magic >> version >> count;
  if (magic != "clef-cache-pack" || version != "1") return {};
  lines.get();  // the newline
  std::vector<std::tuple<std::string, std::size_t, std::size_t, std::int64_t, std::string>> listed(
      count);
  for (auto& [key, offset, length, created, check] : listed) {
    lines >> key >> offset >> length >> created >> check;
    lines.get();
  }
  const auto body = static_cast<std::size_t>(lines.tellg());
  std::vector<PackedEntry> out;
  for (const auto& [key, offset, length, created, check] : listed)
    out.push_back({key, created, text.substr(body + offset, length)});
  return out;
}

/// The check a pack's header holds for an entry: its SHA-256's first 16 hex digits.
inline std::string entry_check(const std::string& text) {
  return clef::sha256_hex(text).substr(0, 16);
}

/// The bytes of a pack holding `entries`, laid out as the format says (each with its check).
inline std::string pack_bytes(const std::vector<PackedEntry>& entries) {
  std::string header = "clef-cache-pack 1 " + std::to_string(entries.size()) + "\n";
  std::string body;
  for (const auto& entry : entries) {
    header += entry.key + " " + std::to_string(body.size()) + " " +
              std::to_string(entry.text.size()) + " " + std::to_string(entry.created) + " " +
              entry_check(entry.text) + "\n";
    body += entry.text + "\n";
  }
  return header + body;
}

/// Every entry the cache in `directory` holds in packs, oldest pack first.
inline std::vector<PackedEntry> packed_entries(const std::string& directory) {
  std::vector<PackedEntry> out;
  for (const auto& path : pack_paths(directory)) {
    auto entries = read_pack(path);
    out.insert(out.end(), entries.begin(), entries.end());
  }
  return out;
}

/// Replaces the pack at `path` with `bytes` as a writer would: a new file renamed over it.
inline void replace_pack(const std::string& path, const std::string& bytes) {
  const std::string temp = path + ".planted";
  std::ofstream(temp, std::ios::binary | std::ios::trunc) << bytes;
  ::chmod(temp.c_str(), 0600);
  std::rename(temp.c_str(), path.c_str());
}

/// Rewrites every entry of every pack in `directory` through `edit` (given the entry's JSON;
/// the pack's header is written to match, checks included: as the directory's owner could).
inline void edit_entries(const std::string& directory,
                         const std::function<void(nlohmann::json&)>& edit) {
  for (const auto& path : pack_paths(directory)) {
    auto entries = read_pack(path);
    for (auto& entry : entries) {
      auto json = nlohmann::json::parse(entry.text);
      edit(json);
      entry.text = json.dump();
      if (json.contains("created") && json["created"].is_number_integer())
        entry.created = json["created"].get<std::int64_t>();
    }
    replace_pack(path, pack_bytes(entries));
  }
}

}  // namespace clef::testing

#include "clef/cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <vector>

#include "clef/digest.hpp"
#include "json_text.hpp"
#include "write_all.hpp"

namespace clef {
namespace {

/// An entry bigger than this is not cached (a response is at most 16 MiB by default).
constexpr std::uint64_t max_entry_bytes = 64u * 1024u * 1024u;
/// How many writes between checks of the size cap.
constexpr unsigned eviction_interval = 64;

std::string dump(const detail::Json& value) {
  return value.dump(-1, ' ', false, detail::Json::error_handler_t::replace);
}

bool has_images(const std::string& body) {
  auto parsed = detail::parse_json(body, ErrorKind::invalid_input, "the request");
  if (!parsed || !parsed->is_object()) return false;
  const auto images = parsed->find("images");
  return images != parsed->end() && !(images->is_array() && images->empty());
}

struct EntryFile {
  std::string path;
  std::uint64_t bytes = 0;
  std::int64_t used =
      0;  ///< mtime in ns: touched on every hit, so the oldest is least recently used
};

/// Every entry file under `directory` (two levels: the key's first two hex digits, then the key).
std::vector<EntryFile> entry_files(const std::string& directory) {
  std::vector<EntryFile> out;
  DIR* top = ::opendir(directory.c_str());
  if (!top) return out;
  while (dirent* shard = ::readdir(top)) {
    const std::string name = shard->d_name;
    // Only the two-hex-digit shards: ".." is two characters too, and is the parent directory.
    if (name.size() != 2 || !std::isxdigit(static_cast<unsigned char>(name[0])) ||
        !std::isxdigit(static_cast<unsigned char>(name[1])))
      continue;
    const std::string shard_path = directory + "/" + name;
    DIR* inner = ::opendir(shard_path.c_str());
    if (!inner) continue;
    while (dirent* entry = ::readdir(inner)) {
      const std::string file = entry->d_name;
      // An entry is KEY.json, KEY 64 hex digits beginning with the shard's two.
      if (file.size() != 64 + 5 || file.compare(64, 5, ".json") != 0 ||
          file.compare(0, 2, name) != 0)
        continue;
      struct stat info {};
      const std::string path = shard_path + "/" + file;
      if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
      out.push_back(
          {path, static_cast<std::uint64_t>(info.st_size),
           static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec});
    }
    ::closedir(inner);
  }
  ::closedir(top);
  return out;
}

bool make_directory(const std::string& path) {
  return ::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST;
}

class CachingTransport final : public Transport {
 public:
  CachingTransport(std::shared_ptr<Transport> inner, CacheOptions options, std::string tag)
      : m_inner(std::move(inner)), m_options(std::move(options)), m_tag(std::move(tag)) {
    evict();
  }

  Result<HttpResponse> send(const HttpRequest& request) override {
    if (!m_options.include_images && has_images(request.body)) return m_inner->send(request);
    const std::string key = cache_key(m_tag, request, m_options.model_version);
    const std::string path = entry_path(key);
    if (auto hit = read_entry(path, key)) return *hit;
    auto response = m_inner->send(request);
    if (response && response->status >= 200 && response->status < 300) store(path, key, *response);
    return response;
  }

 private:
  std::string entry_path(const std::string& key) const {
    return m_options.directory + "/" + key.substr(0, 2) + "/" + key + ".json";
  }

  std::optional<HttpResponse> read_entry(const std::string& path, const std::string& key) const {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    if (text.str().size() > max_entry_bytes) return std::nullopt;
    auto parsed = detail::parse_json(text.str(), ErrorKind::invalid_input, "a cache entry");
    const detail::Json* entry = parsed && parsed->is_object() ? &parsed.value() : nullptr;
    auto field = [&](const char* name) -> const detail::Json* {
      const auto it = entry->find(name);
      return it == entry->end() ? nullptr : &*it;
    };
    const detail::Json* stored_key = entry ? field("key") : nullptr;
    const detail::Json* status = entry ? field("status") : nullptr;
    const detail::Json* body = entry ? field("body") : nullptr;
    const detail::Json* created = entry ? field("created") : nullptr;
    const detail::Json* headers = entry ? field("headers") : nullptr;
    const bool valid = stored_key && stored_key->is_string() && *stored_key == key && status &&
                       status->is_number_integer() && body && body->is_string() && created &&
                       created->is_number_integer() && headers && headers->is_array();
    if (!valid) {
      ::unlink(path.c_str());  // torn or foreign: never an answer
      return std::nullopt;
    }
    if (m_options.ttl.count() > 0 &&
        static_cast<std::int64_t>(std::time(nullptr)) - created->get<std::int64_t>() >=
            m_options.ttl.count()) {
      return std::nullopt;
    }
    HttpResponse response;
    response.status = status->get<int>();
    response.body = body->get<std::string>();
    for (const auto& header : *headers) {
      if (header.is_array() && header.size() == 2 && header[0].is_string() &&
          header[1].is_string()) {
        response.headers.emplace_back(header[0].get<std::string>(), header[1].get<std::string>());
      }
    }
    response.from_cache = true;
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // recently used
    return response;
  }

  void store(const std::string& path, const std::string& key, const HttpResponse& response) {
    detail::Json entry = detail::Json::object();
    entry["key"] = key;
    entry["created"] = static_cast<std::int64_t>(std::time(nullptr));
    entry["status"] = response.status;
    detail::Json headers = detail::Json::array();
    for (const auto& [name, value] : response.headers) {
      if (name == "content-type" || name == "x-typesafe-request-id" || name == "cf-ai-req-id")
        headers.push_back({name, value});
    }
    entry["headers"] = headers;
    entry["body"] = response.body;
    const std::string text = dump(entry);
    if (text.size() > max_entry_bytes) return;
    const std::string shard = m_options.directory + "/" + key.substr(0, 2);
    if (!make_directory(m_options.directory) || !make_directory(shard)) return;
    // Written whole to a private temporary file, then renamed over the entry: a reader sees the
    // old entry or the new one, never part of one, whatever other writers do.
    std::string temp = shard + "/." + key + ".XXXXXX";
    const int fd = ::mkstemp(temp.data());
    if (fd < 0) return;
    const bool written = detail::write_all(fd, text);
    const bool ok = ::close(fd) == 0 && written;
    if (!ok || ::rename(temp.c_str(), path.c_str()) != 0) {
      ::unlink(temp.c_str());
      return;
    }
    if (++m_writes % eviction_interval == 0) evict();
  }

  /// Removes the least recently used entries until the cache is under 90% of its cap.
  void evict() {
    std::lock_guard<std::mutex> lock(m_evicting);
    auto files = entry_files(m_options.directory);
    std::uint64_t total = 0;
    for (const auto& f : files) total += f.bytes;
    if (total <= m_options.max_bytes) return;
    std::sort(files.begin(), files.end(),
              [](const EntryFile& a, const EntryFile& b) { return a.used < b.used; });
    const std::uint64_t target = m_options.max_bytes / 10 * 9;
    for (const auto& f : files) {
      if (total <= target) break;
      if (::unlink(f.path.c_str()) == 0) total -= f.bytes;
    }
  }

  std::shared_ptr<Transport> m_inner;
  CacheOptions m_options;
  std::string m_tag;
  std::atomic<unsigned> m_writes{0};
  std::mutex m_evicting;
};

}  // namespace

bool is_moving_alias(std::string_view model) noexcept {
  constexpr std::string_view latest = "latest";
  return model.size() >= latest.size() &&
         model.compare(model.size() - latest.size(), latest.size(), latest) == 0;
}

std::string cache_key(std::string_view tag, const HttpRequest& request,
                      std::string_view model_version) {
  Sha256Hasher hasher;
  for (std::string_view part :
       {tag, std::string_view(request.method), std::string_view(request.url), model_version}) {
    hasher.update(part);
    hasher.update(std::string_view("\x1f", 1));
  }
  hasher.update(request.body);
  return hasher.hex();
}

std::shared_ptr<Transport> make_caching_transport(std::shared_ptr<Transport> inner,
                                                  CacheOptions options, std::string tag) {
  return std::make_shared<CachingTransport>(std::move(inner), std::move(options), std::move(tag));
}

Result<CacheStats> cache_stats(const std::string& directory) {
  CacheStats stats;
  for (const auto& f : entry_files(directory)) {
    ++stats.entries;
    stats.bytes += f.bytes;
  }
  return stats;
}

Result<CacheStats> clear_cache(const std::string& directory) {
  CacheStats removed;
  for (const auto& f : entry_files(directory)) {
    if (::unlink(f.path.c_str()) != 0) {
      return make_error(ErrorKind::invalid_input,
                        std::string("cannot remove a cache entry: ") + std::strerror(errno),
                        f.path);
    }
    ++removed.entries;
    removed.bytes += f.bytes;
  }
  return removed;
}

}  // namespace clef

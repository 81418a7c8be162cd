// clef: a decision cache on disk that cannot give the wrong answer — keyed by everything the
// answer depends on, including the model's resolved version — shared safely by processes.
//
//     clef::CacheOptions cache;
//     cache.directory = "/var/cache/clef";
//     cache.model_version = "sha256:…";  // Ollama: the model's digest from /api/tags
//     auto transport = clef::make_caching_transport(clef::make_curl_transport(), cache, "ollama");
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "clef/result.hpp"
#include "clef/transport.hpp"

namespace clef {

struct CacheOptions {
  std::string directory;
  /// The cache's size cap; past it the least recently used entries are removed.
  std::uint64_t max_bytes = 256u * 1024u * 1024u;
  /// The model's resolved version (Ollama's digest, else the model name): part of the key, so a
  /// model that changes behind its name is never answered from the old one's entries.
  std::string model_version;
  /// How long an entry answers: 0 = for ever (pinned versions). moving_alias_ttl suits names that
  /// move (is_moving_alias).
  std::chrono::seconds ttl{0};
  /// Requests with images are sent, not cached, unless this is set.
  bool include_images = false;
};

/// The TTL clef uses for a moving alias: short, so a moved alias is picked up soon.
inline constexpr std::chrono::seconds moving_alias_ttl{600};

/// True for a model name that may point at another model tomorrow: one ending in "latest"
/// ("clef-flash:latest", "@cf/x/y-latest").
bool is_moving_alias(std::string_view model) noexcept;

/// The cache key: SHA-256 over `tag` (the backend), the full URL (base URL and path), the
/// model version and the request body. Headers (the token) are not part of it.
std::string cache_key(std::string_view tag, const HttpRequest& request,
                      std::string_view model_version);

/// Answers a request from the cache when a live entry exists (HttpResponse::from_cache), else
/// sends it through `inner` and stores a 2xx response. Entries are written to a temporary file
/// and renamed into place, so concurrent writers (threads or processes) never leave a torn
/// entry; an unreadable entry is a miss and is removed.
std::shared_ptr<Transport> make_caching_transport(std::shared_ptr<Transport> inner,
                                                  CacheOptions options, std::string tag);

struct CacheStats {
  std::size_t entries = 0;
  std::uint64_t bytes = 0;
};

/// What the cache in `directory` holds (an absent directory is an empty cache).
Result<CacheStats> cache_stats(const std::string& directory);
/// Removes every entry in `directory`; returns what was removed.
Result<CacheStats> clear_cache(const std::string& directory);

}  // namespace clef

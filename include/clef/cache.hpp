// clef: a decision cache on disk that cannot give the wrong answer — keyed by everything the
// answer depends on, including the model's resolved version — shared safely by processes.
//
//     clef::CacheOptions cache;
//     cache.directory = "/var/cache/clef";
//     cache.model_version = "sha256:…";  // Ollama: the model's digest from /api/tags
//     auto transport = clef::make_caching_transport(clef::make_curl_transport(), cache,
//                                                   clef::Backend::ollama);
//     if (!transport) std::cerr << transport.error().to_string() << "\n";  // the cache is off
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "clef/async_transport.hpp"
#include "clef/backend.hpp"
#include "clef/export.hpp"
#include "clef/options.hpp"
#include "clef/result.hpp"
#include "clef/transport.hpp"

namespace clef {

struct CacheOptions {
  std::string directory;
  /// The cap on the disk space the cache takes (its files' blocks, not their sizes). Past it the
  /// least recently used packs are removed, down to 90%.
  std::uint64_t max_bytes = 256u * 1024u * 1024u;
  /// The model's resolved version (Ollama's digest, else the model name): part of the key, so a
  /// model that changes behind its name is never answered from the old one's entries.
  std::string model_version;
  /// How long an entry answers: 0 = for ever (pinned versions). moving_alias_ttl suits names that
  /// move (is_moving_alias).
  std::chrono::seconds ttl{0};
  /// Keeps these entries apart from every other salt's (and from the unsalted ones) for the same
  /// request: clef eval --repeat gives each repeat its own, so that no repeat is answered from
  /// another. Empty: the plain key.
  std::string key_salt;
  /// Requests with images are sent, not cached, unless this is set.
  bool include_images = false;
  /// How answers are checked before they are stored and when they are read: give the client's
  /// own (ClientOptions::validation), so the cache never holds what the client would refuse.
  ValidationOptions validation;
};

/// The TTL clef uses for a moving alias: short, so a moved alias is picked up soon.
inline constexpr std::chrono::seconds moving_alias_ttl{600};

/// True for a model name that may point at another model tomorrow: one ending in "latest"
/// ("clef-flash:latest", "@cf/x/y-latest").
CLEF_API bool is_moving_alias(std::string_view model) noexcept;

/// What CacheOptions::model_version and ttl should be for `model`, served as `options` say.
struct ModelVersion {
  std::string version;          ///< Ollama: "NAME@DIGEST"; other backends: the name itself.
  std::chrono::seconds ttl{0};  ///< moving_alias_ttl for a moving alias known only by name.
};

/// Resolves `model` for the cache key. For Ollama, asks /api/tags once (through `options`'
/// transport, timeouts and CA) for the digest of `model` or `model:latest`; an error when the
/// server cannot be asked or has no such model, since caching by name alone could answer from
/// another model's entries. Other backends publish no version: the name, with a short TTL when
/// it is a moving alias (is_moving_alias).
///
///     clef::ClientOptions options = clef::ClientOptions::from_environment(clef::Backend::ollama);
///     clef::CacheOptions cache;
///     auto version = clef::resolve_model_version(options, "clef-flash");
///     if (version) {
///       cache.model_version = version->version;
///       cache.ttl = version->ttl;
///     }
CLEF_API Result<ModelVersion> resolve_model_version(const ClientOptions& options,
                                                    const std::string& model);

/// The cache key: SHA-256 over `tag` (the backend's name), the full URL (base URL and path), the
/// model version and the request body. Headers (the token) are not part of it.
CLEF_API std::string cache_key(std::string_view tag, const HttpRequest& request,
                               std::string_view model_version);

/// Creates `directory` when it is missing (mode 0700; its parent must exist) and checks that it
/// can hold answers safely. Refused, with the reason in the error: a path that is not a
/// directory, a directory owned by another user, or one writable by group or others (anyone who
/// can write it could plant answers), or one this process cannot write; the same of its packs/
/// when it has one (which must not be a symlink either).
CLEF_API Status check_cache_directory(const std::string& directory);

/// Answers a request from the cache when a live entry exists (HttpResponse::from_cache), else
/// sends it through `inner` and stores the response if it is an answer: a 2xx whose body,
/// read as `backend` sends it, is a decision with a valid answer (AnswerStatus::ok) to every
/// question of the request, under `options.validation`. An HTML page from a captive portal, a
/// refusal or an invalid answer is passed on and never stored. An entry is checked the same way
/// when read; one that fails is a miss. A pack's header holds a check of each entry (the start
/// of its SHA-256); a pack whose entry fails it (damaged, edited in place), is not a 2xx answer
/// for its key, or that is not a regular file of yours that only you may write, or a symlink, is
/// removed (a pack is read by its header, each offset checked against its size before a byte it
/// points at is read); a whole entry that does not validate under these options is not read
/// again (its pack ages out).
/// The check is no lock: whoever can write the directory can plant answers, which is why it is
/// refused unless it is yours alone.
///
/// Entries are written in packs, many to a file (`packs/` in the directory, 0700; each pack 0600,
/// written whole to a temporary file and renamed into place, never changed after), so concurrent
/// writers (threads or processes) never leave a torn entry, and a batch's misses do not create
/// a file each. An entry waits in memory for its pack: a pack is written when 512 entries or a
/// sixteenth of the cap wait, at the first entry a second or more after the last pack (so one
/// answer is written at once), when the last cache on the directory in this process goes, and
/// when the process exits (a return from main, std::exit), whichever thread holds the cache
/// then; until then it answers the caches of this process on that directory (they share what
/// waits) and no other process, and a process killed first (or ended by _exit or quick_exit)
/// loses it (a miss next time, never a wrong answer).
/// Other writers' packs are seen when the directory changes, and at least once a second; a
/// lookup of a key this process has not seen looks at the directory at most once a millisecond
/// (an fstat per miss was a tenth of a batch's misses' cost), so another writer's pack may be
/// missed for that long (the answer is asked again, never wrong).
/// Entries in files of their own (KEY.json in a shard, as clef before packs wrote them) are
/// still read, never written. Symlinks in the cache are never followed. The size cap is
/// enforced after writes, never when a cache is opened: until a process has scanned the cache,
/// about one entry in 64 scans it (each process starts at a random point of that count, so
/// one-answer runs share the work); after a scan it counts its own writes against the cap and
/// scans again when they pass it, or every 4096 entries. A scan removes the least recently used
/// packs (a hit touches its pack) and file entries, and the temporary files of writers killed
/// more than 10 minutes ago. Fails as check_cache_directory does.
CLEF_API Result<std::shared_ptr<Transport>> make_caching_transport(std::shared_ptr<Transport> inner,
                                                                   CacheOptions options,
                                                                   Backend backend);

/// The same cache in front of an AsyncTransport (a curl loop), for Client::submit and batches
/// (ClientOptions::async_transport): an entry is looked up on the thread that starts the request
/// (the caller's, or the loop's for a retry) and an answer stored on the loop thread, so a batch
/// with a cache still runs no thread per request. A hit is delivered through `inner`'s after(0),
/// on its loop thread, as every handler is.
CLEF_API Result<std::shared_ptr<AsyncTransport>> make_caching_transport(
    std::shared_ptr<AsyncTransport> inner, CacheOptions options, Backend backend);

struct CacheStats {
  std::size_t entries = 0;  ///< Keys with an entry (a key stored twice counts once).
  std::uint64_t bytes = 0;  ///< On disk: the entries' blocks.
};

/// What the cache in `directory` holds. Fails when `directory` does not exist or is not a
/// directory, or its packs/ would be refused (check_cache_directory).
CLEF_API Result<CacheStats> cache_stats(const std::string& directory);
/// Removes every entry in `directory`, any temporary file a writer left, and any symlink, FIFO or
/// device under an entry's name (the link or node itself); returns what was removed. Fails as
/// cache_stats does. Never follows a symlink out of the cache.
CLEF_API Result<CacheStats> clear_cache(const std::string& directory);

}  // namespace clef

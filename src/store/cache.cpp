// The implementation of clef/cache.hpp: a decision cache on disk that cannot give the wrong answer
// — keyed by everything the answer depends on, including the model's resolved version — shared
// safely by processes.
#include "clef/cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "clef/digest.hpp"
#include "store/answer_verdict.hpp"
#include "store/cache_directory.hpp"
#include "store/cache_packs.hpp"
#include "store/cache_request.hpp"
#include "store/stage.hpp"
#include "util/json_text.hpp"
#include "util/redact.hpp"
#include "util/sha256_bytes.hpp"
#include "util/write_all.hpp"
#include "wire/model_match.hpp"
#include "wire/wire_response.hpp"

namespace clef {
namespace {

using detail::Asked;
using detail::cache_error;
using detail::CacheFile;
using detail::Fd;
using detail::LastQuestions;
using detail::max_cache_entry_bytes;
using detail::may_carry_media;
using detail::open_checked;
using detail::open_directory;
using detail::open_shard;
using detail::scan;
using detail::Scan;

/// The SHA-256 cache_key() writes in hex.
detail::Sha256 cache_digest(std::string_view tag, const HttpRequest& request,
                            std::string_view model_version) {
  const std::string_view separator("\x1f", 1);
  return detail::sha256({tag, separator, request.method, separator, request.url, separator,
                         model_version, separator, request.body});
}

/// Until a process has scanned the cache, about one write in this many scans it.
constexpr unsigned eviction_interval = 64;
/// After a scan a process counts its own writes against the cap; it scans again when that count
/// passes the cap, or after this many writes (to learn what other processes wrote).
constexpr unsigned rescan_interval = 4096;
/// How far in the future an entry's time may be (another machine's clock sharing the directory):
/// no more, or a future date would stretch a moving alias's TTL.
constexpr std::int64_t max_clock_skew_seconds = 300;
/// A temporary file older than this belongs to a writer that was killed (a write takes far less).
constexpr std::int64_t stale_temp_seconds = 600;

/// A whole number that fits in an int64, or nothing (never a wrapped or truncated value).
std::optional<std::int64_t> whole_number(const detail::Json& value) {
  if (value.is_number_unsigned()) {
    const auto n = value.get<std::uint64_t>();
    if (n > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<std::int64_t>(n);
  }
  if (value.is_number_integer()) return value.get<std::int64_t>();
  return std::nullopt;
}

/// How big a pack grows before it is written: a sixteenth of the cap, within 4 KiB and 4 MiB,
/// so that evicting the least recently used pack frees a small part of the cache.
std::uint64_t pack_bytes(std::uint64_t max_bytes) {
  return std::clamp<std::uint64_t>(max_bytes / 16, 4096, 4u * 1024u * 1024u);
}

/// The cache as a stage (stage.hpp): answered from a live entry, else sent, and a whole answer
/// stored on its way back.
class CacheStage final : public detail::Stage {
 public:
  CacheStage(CacheOptions options, Backend backend, Fd top)
      : m_options(std::move(options)),
        m_backend(backend),
        m_tag(to_string(backend)),
        m_top(std::move(top)),
        m_shards_at_start(detail::holds_shards(m_top.get())),
        m_packs(detail::PackStore::of(m_top.get(), pack_bytes(m_options.max_bytes))),
        // A random start: a process that writes once still checks the cap one time in 64.
        m_writes(static_cast<unsigned>(std::random_device{}() % eviction_interval)) {}

  ~CacheStage() override {
    // The last entries are written, and counted against the cap like any others.
    const auto written = m_packs->flush();
    if (written.entries > 0) wrote(written);
  }
  CacheStage(const CacheStage&) = delete;
  CacheStage& operator=(const CacheStage&) = delete;

  std::optional<Result<HttpResponse>> answer(const HttpRequest& request,
                                             detail::StageNote& key) override {
    if (!m_options.include_images && may_carry_media(request.body) && !cacheable(request))
      return std::nullopt;
    key = detail::pack_key(cache_digest(m_tag, request, m_options.model_version));
    if (auto hit = read_entry(*key, request)) return Result<HttpResponse>(std::move(*hit));
    return std::nullopt;
  }

  void received(const HttpRequest& request, const detail::StageNote& key,
                Result<HttpResponse>& response, bool judged) override {
    if (!response || !key) return;  // no key: not a request this cache keeps
    if (judged) return;             // the client says whether it is an answer: verdict()
    if (answers(*response, request)) store(*key, *response, detail::request_credentials(request));
  }

  void verdict(const HttpRequest& request, const detail::StageNote& key,
               const detail::AnswerVerdict& verdict) override {
    if (!key) return;
    // The client's verdict stands for the cache's own check when both read alike; a key was
    // made only for a request whose images, if any, the cache keeps (answer()).
    const bool alike = verdict.backend == m_backend &&
                       detail::same_checks(verdict.validation, m_options.validation);
    if (alike ? verdict.whole : answers(verdict.response, request))
      store(*key, verdict.response, detail::request_credentials(request));
  }

 private:
  /// What `request` asks, when its answer may be cached (images only when told so).
  std::optional<Asked> cacheable(const HttpRequest& request) const {
    auto asked = detail::read_asked(request.body, m_last_questions);
    if (!asked || (asked->images && !m_options.include_images)) return std::nullopt;
    return asked;
  }

  /// True when `response` is what the client accepts as a whole answer to `request`, whose answer
  /// the cache may keep.
  bool answers(const HttpResponse& response, const HttpRequest& request) const {
    const auto asked = cacheable(request);
    return asked && answers(response, *asked);
  }

  /// True when `response` is what the client accepts as a whole answer to `asked`.
  bool answers(const HttpResponse& response, const Asked& asked) const {
    if (response.status < 200 || response.status > 299) return false;
    auto decision =
        detail::read_decision(m_backend, response, *asked.questions, m_options.validation, {});
    if (decision && m_options.validation.require_asked_model)
      detail::mark_other_model(decision.value(), asked.model, traits_of(m_backend).tagged_models);
    return decision && decision->all_ok();
  }

  /// What a stored entry is to the request that found it.
  enum class Verdict { answer, expired, not_cached, not_answer, damaged };
  struct Checked {
    Verdict verdict;
    std::optional<HttpResponse> response;  ///< With Verdict::answer.
  };

  /// `text`, stored for `key`, checked to answer what `request` asks (its body read back only
  /// once an entry is there: a miss costs no parse).
  Checked check_entry(const std::string& text, const std::string& key, const HttpRequest& request,
                      std::optional<std::uint32_t> listed_created = std::nullopt) const {
    auto entry = parse_entry(text, key);
    // A header's time that is not the entry's own made a pack look newer than it is (or an
    // expired entry never replaced): damaged.
    if (!entry ||
        (listed_created && *listed_created != detail::PackStore::clamped_time(entry->created)))
      return {Verdict::damaged, std::nullopt};
    const auto asked = cacheable(request);
    if (!asked) return {Verdict::not_cached, std::nullopt};  // images, unreadable
    if (!answers(entry->response, *asked)) return {Verdict::not_answer, std::nullopt};
    if (entry->expired) return {Verdict::expired, std::nullopt};  // the next store replaces it
    entry->response.from_cache = true;
    return {Verdict::answer, std::move(entry->response)};
  }

  /// The entry stored for `key`, when it answers `request`: in a pack (or waiting for one), else
  /// in a file of its own, as clef before packs wrote them.
  std::optional<HttpResponse> read_entry(const detail::PackKey& key, const HttpRequest& request) {
    if (auto found = m_packs->find(key)) {
      auto checked = check_entry(found->text, detail::key_hex(key), request, found->listed_created);
      if (checked.verdict == Verdict::damaged) m_packs->discard(*found);  // edited, torn, planted
      if (checked.verdict == Verdict::not_answer) m_packs->forget(key);
      return std::move(checked.response);
    }
    return m_shards_at_start ? read_file_entry(detail::key_hex(key), request) : std::nullopt;
  }

  /// The entry in file KEY.json of its shard, when it answers `request`.
  std::optional<HttpResponse> read_file_entry(const std::string& key, const HttpRequest& request) {
    const int shard = m_shards.get(m_top.get(), key, false);
    if (shard < 0) return std::nullopt;
    const std::string name = key + ".json";
    // O_NONBLOCK: opening a FIFO planted here must not wait for a writer.
    Fd fd(::openat(shard, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
      if (errno == ELOOP) ::unlinkat(shard, name.c_str(), 0);  // a symlink: never an entry
      return std::nullopt;
    }
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0) return std::nullopt;
    // Checked before a byte is read: a FIFO, a device or a huge file is removed unread.
    if (!detail::own_file(info) || info.st_size <= 0 ||
        static_cast<std::uint64_t>(info.st_size) > max_cache_entry_bytes) {
      detail::remove_if_same(shard, name, info);
      return std::nullopt;
    }
    std::string text(static_cast<std::size_t>(info.st_size), '\0');
    std::size_t have = 0;
    while (have < text.size()) {
      const ssize_t n = ::read(fd.get(), &text[have], text.size() - have);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      have += static_cast<std::size_t>(n);
    }
    text.resize(have);
    auto checked = check_entry(text, key, request);
    if (checked.verdict == Verdict::damaged || checked.verdict == Verdict::not_answer) {
      detail::remove_if_same(shard, name, info);  // torn, edited or foreign: never an answer
    }
    if (checked.verdict == Verdict::answer) ::futimens(fd.get(), nullptr);  // recently used
    return std::move(checked.response);
  }

  struct Entry {
    HttpResponse response;
    std::int64_t created = 0;
    bool expired = false;  ///< Older than the TTL.
  };

  /// The stored response, or nothing when the text is not an entry for `key` with a 2xx status.
  std::optional<Entry> parse_entry(const std::string& text, const std::string& key) const {
    auto parsed = clef::parse_json(text, "a cache entry");
    if (!parsed || !parsed->is_object()) return std::nullopt;
    const detail::Json& entry = parsed.value();
    auto field = [&](const char* name) -> const detail::Json* {
      const auto it = entry.find(name);
      return it == entry.end() ? nullptr : &*it;
    };
    const detail::Json* stored_key = field("key");
    const detail::Json* status = field("status");
    const detail::Json* body = field("body");
    const detail::Json* created = field("created");
    const detail::Json* headers = field("headers");
    if (!stored_key || !stored_key->is_string() || *stored_key != key || !status || !body ||
        !body->is_string() || !created || !headers || !headers->is_array()) {
      return std::nullopt;
    }
    const auto code = whole_number(*status);
    const auto written = whole_number(*created);
    const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
    if (!code || *code < 200 || *code > 299 || !written || *written < 0 ||
        *written > now + max_clock_skew_seconds) {
      return std::nullopt;
    }
    Entry out;
    out.response.status = static_cast<int>(*code);
    out.response.body = body->get<std::string>();
    for (const auto& header : *headers) {
      if (header.is_array() && header.size() == 2 && header[0].is_string() &&
          header[1].is_string()) {
        out.response.headers.emplace_back(header[0].get<std::string>(),
                                          header[1].get<std::string>());
      }
    }
    out.created = *written;
    out.expired = m_options.ttl.count() > 0 && now - *written >= m_options.ttl.count();
    return out;
  }

  /// Writes the answer with every credential of its request scrubbed: an entry may outlive the
  /// token, and a shared cache directory must not hand one to another user.
  void store(const detail::PackKey& key, const HttpResponse& response,
             const detail::Secrets& credentials) {
    // Written as text (the entry's JSON, members in parse_entry's order), not built as a JSON
    // value and dumped: a third of a miss's work was that.
    const auto created = static_cast<std::int64_t>(std::time(nullptr));
    // Redacted only when there is something to redact (no key, no copy).
    std::string redacted;
    const auto clean = [&](const std::string& text) -> std::string_view {
      return credentials.empty()
                 ? std::string_view(text)
                 : std::string_view(redacted = detail::redact_all(text, credentials));
    };
    std::string text;
    text.reserve(192 + 2 * response.body.size());  // what append_json_string makes room for
    text += "{\"key\":\"";
    detail::append_key_hex(text, key);
    text += "\",\"created\":";
    detail::append_decimal(text, created);
    text += ",\"status\":";
    detail::append_decimal(text, response.status);
    text += ",\"headers\":[";
    bool first = true;
    for (const auto& [name, value] : response.headers) {
      if (name != "content-type" && name != "x-typesafe-request-id" && name != "cf-ai-req-id")
        continue;
      const std::size_t before = text.size();
      text += first ? "[" : ",[";
      if (!detail::try_append_json_string(text, name) ||
          !(text += ',', detail::try_append_json_string(text, clean(value)))) {
        text.resize(before);  // not UTF-8: not kept (a header is not needed to answer)
        continue;
      }
      text += ']';
      first = false;
    }
    text += "],\"body\":";
    if (!detail::try_append_json_string(text, clean(response.body))) return;
    text += '}';
    if (text.size() > max_cache_entry_bytes) return;
    const auto written = m_packs->add(key, created, std::move(text));
    if (written.entries > 0) wrote(written);
  }

  /// Counts a pack's entries and disk space against the cap and scans when it is due: never
  /// at start, so a run that only reads never pays for a scan; a batch scans about once per
  /// tenth of the cap it writes, not once per 64 entries.
  void wrote(const detail::PackWritten& written) {
    std::lock_guard<std::mutex> lock(m_evicting);
    const unsigned before = m_writes;
    m_writes += static_cast<unsigned>(written.entries);
    if (!m_estimate) {
      if (before / eviction_interval != m_writes / eviction_interval) evict();
      return;
    }
    *m_estimate += written.disk_bytes;
    m_since_scan += static_cast<unsigned>(written.entries);
    if (*m_estimate > m_options.max_bytes || m_since_scan >= rescan_interval) evict();
  }

  /// Sweeps killed writers' temporary files and removes the least recently used entries until
  /// the cache takes under 90% of its cap on disk. Called with m_evicting held.
  void evict() {
    Scan found = scan(m_top.get());
    const std::int64_t stale =
        (static_cast<std::int64_t>(std::time(nullptr)) - stale_temp_seconds) * 1'000'000'000;
    std::vector<const CacheFile*> entries;
    std::uint64_t total = 0;
    for (const auto& file : found.files) {
      if (file.temporary) {
        if (file.used < stale) found.remove(file);
        continue;
      }
      entries.push_back(&file);
      total += file.bytes;
    }
    m_since_scan = 0;
    m_estimate = total;
    if (total <= m_options.max_bytes) return;
    std::sort(entries.begin(), entries.end(),
              [](const CacheFile* a, const CacheFile* b) { return a->used < b->used; });
    const std::uint64_t target = m_options.max_bytes / 10 * 9;
    for (const CacheFile* file : entries) {
      if (total <= target) break;
      if (found.remove(*file)) total -= file->bytes;
    }
    m_estimate = total;
  }

  CacheOptions m_options;
  Backend m_backend;
  std::string m_tag;
  Fd m_top;  ///< The cache directory, opened and checked once: every path is relative to it.
  /// Whether the cache held entries in files of their own when it was opened (clef before packs
  /// wrote them; they are read, never written): a lookup in a cache without them costs no call.
  const bool m_shards_at_start;
  /// Shared by every cache on this directory in the process (PackStore::of).
  std::shared_ptr<detail::PackStore> m_packs;
  detail::OpenShards m_shards;
  mutable LastQuestions m_last_questions;
  std::mutex m_evicting;  ///< Guards the three counts below, and a scan.
  unsigned m_writes;
  unsigned m_since_scan = 0;
  std::optional<std::uint64_t> m_estimate;  ///< Disk bytes at the last scan, plus writes since.
};

Result<std::shared_ptr<CacheStage>> cache_stage(CacheOptions options, Backend backend) {
  // The salt joins the version in the key (a separator no model name holds): an unsalted key is
  // unchanged, so existing caches still answer.
  if (!options.key_salt.empty()) options.model_version += "\x1e" + options.key_salt;
  auto top = open_checked(options.directory);
  if (!top) return top.error();
  return std::make_shared<CacheStage>(std::move(options), backend, std::move(top).value());
}

}  // namespace

bool is_moving_alias(std::string_view model) noexcept {
  constexpr std::string_view latest = "latest";
  return model.size() >= latest.size() &&
         model.compare(model.size() - latest.size(), latest.size(), latest) == 0;
}

std::string cache_key(std::string_view tag, const HttpRequest& request,
                      std::string_view model_version) {
  return detail::to_hex(cache_digest(tag, request, model_version));
}

Status check_cache_directory(const std::string& directory) {
  auto top = open_checked(directory);
  if (!top) return top.error();
  return {};
}

Result<std::shared_ptr<Transport>> make_caching_transport(std::shared_ptr<Transport> inner,
                                                          CacheOptions options, Backend backend) {
  auto stage = cache_stage(std::move(options), backend);
  if (!stage) return stage.error();
  return detail::staged_transport(std::move(stage).value(), std::move(inner));
}

Result<std::shared_ptr<AsyncTransport>> make_caching_transport(
    std::shared_ptr<AsyncTransport> inner, CacheOptions options, Backend backend) {
  auto stage = cache_stage(std::move(options), backend);
  if (!stage) return stage.error();
  return detail::staged_loop(std::move(stage).value(), std::move(inner));
}

}  // namespace clef

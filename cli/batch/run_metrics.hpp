// What `clef batch` tells a monitoring system while it runs: its counts, pace, latency and cost,
// per host, rendered in the Prometheus text format (--metrics-file, --metrics-push).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "clef/batch.hpp"
#include "clef/decision.hpp"

namespace clef::cli {

class Exposition;

/// The run's numbers as Progress counts them, kept under a lock of their own so that the
/// exporter's thread can render them while the batch writes. The names follow Prometheus'
/// conventions (docs/batch.md lists them): counters end in _total, times are _seconds.
class RunMetrics {
 public:
  /// `hosts`: each host's base URL (without credentials), in the run's order; `kept`: results
  /// --resume kept from the last run; `shard`: "K/N" or "".
  RunMetrics(std::vector<std::string> hosts, std::size_t kept, std::string shard);

  /// An item read from the input (it is in flight until it is written or left not done).
  void read();
  /// An item's line written: `ok` as the summary counts it, with its decision or its error.
  void written(bool ok, const Decision* decision, const Error* error);
  /// A --dedupe copy written (counted in written() too).
  void deduplicated();
  /// An item left out of the output (cancelled, the quota spent): --resume decides it.
  void not_done();
  /// A 429/503 from `host`.
  void refused(const std::string& host);
  /// The run is over: the per-host numbers become the summary's own, exactly.
  void finish(const BatchSummary& summary);

  /// The shard's index every series is labelled with ("" for a run that is not split).
  const std::string& shard() const { return m_shard; }

  /// Every metric in the Prometheus text exposition format 0.0.4, "# HELP" and "# TYPE" lines
  /// included, ending in a newline.
  std::string text() const;

 private:
  /// Upper bounds of the latency histogram's buckets, in seconds (+Inf is implied).
  static constexpr std::array<double, 14> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                      1,     2.5,  5,     10,   30,  60,   120};
  struct Host {
    std::size_t answered = 0, failed = 0, refused = 0, ejections = 0;
    std::array<std::size_t, kBuckets.size()> buckets{};  ///< Each bucket's own count.
    std::size_t observed = 0;
    double seconds = 0;
  };
  Host& host_named(const std::string& name);
  void write_items(Exposition& out, double elapsed) const;
  void write_latency(Exposition& out) const;
  void write_hosts(Exposition& out) const;

  mutable std::mutex m_mutex;
  std::vector<std::string> m_order;  ///< Hosts in the run's order.
  std::map<std::string, Host> m_hosts;
  const std::string m_shard;
  std::size_t m_kept = 0;
  std::size_t m_read = 0, m_ok = 0, m_failed = 0, m_not_done = 0, m_cached = 0;
  std::size_t m_deduplicated = 0, m_refused = 0, m_cost_unknown = 0;
  double m_cost_usd = 0;
  bool m_finished = false;
  std::chrono::system_clock::time_point m_started = std::chrono::system_clock::now();
  std::chrono::steady_clock::time_point m_clock = std::chrono::steady_clock::now();
  std::chrono::steady_clock::duration m_elapsed{};  ///< Frozen by finish().
};

}  // namespace clef::cli

// clef batch's progress bar (on a terminal) and its final summary on stderr.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "batch/cost_tally.hpp"
#include "batch/run_metrics.hpp"
#include "clef/batch.hpp"

namespace clef::cli {

class Progress {
 public:
  /// `model`: what the cost line names when a decision's cost is unknown.
  Progress(std::ostream& err, bool is_tty, std::optional<std::size_t> total_lines,
           std::size_t resumed, std::string model);

  /// What this progress counts is also counted there (--metrics-file, --metrics-push).
  void report_to(RunMetrics* metrics) { m_metrics = metrics; }
  /// An item of this run's share read from the input.
  void read() {
    if (m_metrics) m_metrics->read();
  }
  void skipped() { ++m_skipped; }
  void not_done() {
    ++m_not_done;
    if (m_metrics) m_metrics->not_done();
  }
  /// A line written as a copy of an earlier one's (--dedupe): only those written are counted.
  void deduplicated() {
    ++m_deduplicated;
    if (m_metrics) m_metrics->deduplicated();
  }
  /// A 429/503 from `host`.
  void refused(const std::string& host) {
    if (m_metrics) m_metrics->refused(host);
  }
  /// One item written; `decision` is null for an error, `error` null for a decision.
  void finished(bool ok, const Decision* decision, const Error* error = nullptr);
  /// The batch is paused until `until` because of `why` (a 429/503): the bar says so; without a
  /// terminal a line says so when the pause is half a second or more.
  void paused(std::chrono::system_clock::time_point until, const Error& why);
  std::size_t written() const { return m_done; }
  /// Clears the bar and prints the summary: counts per winning label, failures, throughput, what
  /// the decisions cost, and with several hosts a line per host.
  void finish(const BatchSummary& summary);
  std::size_t failures() const { return m_failed; }
  /// Items read and not done (a stop, a spent quota, a failed write): --resume sends them.
  std::size_t left_undone() const { return m_not_done; }

 private:
  void draw(bool force);
  /// With several hosts: how one did.
  void print_host(const HostSummary& host);
  std::ostream& m_err;
  bool m_tty;
  std::optional<std::size_t> m_total;
  std::size_t m_resumed;
  std::size_t m_done = 0, m_failed = 0, m_skipped = 0, m_not_done = 0, m_cached = 0;
  std::size_t m_deduplicated = 0;
  std::chrono::system_clock::time_point m_printed_until{};  ///< Of the last "paused" line.
  std::map<std::string, std::map<std::string, std::size_t>> m_labels;  // question -> label -> n
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point m_last_draw{};
  std::chrono::system_clock::time_point m_paused_until{};
  std::string m_pause_reason;
  std::string m_model;
  CostTally m_cost;
  RunMetrics* m_metrics = nullptr;
};

}  // namespace clef::cli

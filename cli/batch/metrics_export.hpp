// --metrics-file and --metrics-push: a batch's RunMetrics written for node_exporter's textfile
// collector and pushed to a Prometheus Pushgateway every few seconds, from a thread of their own,
// and once more when the run is over.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "batch/run_metrics.hpp"
#include "clef/transport.hpp"

namespace clef::cli {

struct MetricsTargets {
  std::string file;             ///< --metrics-file: replaced whole each time (never half written).
  std::string push_url;         ///< --metrics-push: the Pushgateway's base URL.
  std::string job = "clef";     ///< --metrics-job: the push's job label.
  std::string shard;            ///< The shard's index: a grouping label of the push ("" for none).
  double interval_seconds = 5;  ///< --metrics-interval
  std::string ca_file;          ///< Extra CA certificates for an https Pushgateway (--ca-file).
};

/// Refused before the run: a metrics file that exists and is not a regular file (a device, a
/// FIFO, a directory, a link: it would be replaced by one), a push URL that is not http(s), a
/// job name that is not [A-Za-z0-9_.-] (nor "." or ".."), an interval outside 0.1 s .. 1 day
/// (or NaN). The error names the flag.
Status check_metrics_targets(const MetricsTargets& targets);

/// Exports from a thread of its own while it lives (the first export at once); finish() exports
/// the final numbers and stops. A failure to write or push is a warning told to `warn` (once,
/// and again after it has worked in between), from the export's thread: metrics never stop a
/// batch, hold it up, nor change its exit code. A push in progress when finish() is called is
/// abandoned; the last push waits 1 s to connect and 2 s in all, so a gateway that does not
/// answer delays the end by 2 s at most.
class MetricsExport {
 public:
  using Warn = std::function<void(const std::string& line)>;
  MetricsExport(const RunMetrics& metrics, MetricsTargets targets, Warn warn);
  MetricsExport(const MetricsExport&) = delete;
  MetricsExport& operator=(const MetricsExport&) = delete;
  ~MetricsExport();

  /// After RunMetrics::finish: stops the thread, then writes and pushes the final numbers.
  void finish();

 private:
  /// Ends the thread, abandoning a push under way; idempotent.
  void stop_thread();
  void run();
  /// `last`: the final export, made on the caller's thread with the short timeouts.
  void export_now(bool last);
  void warn(bool& failing, const std::string& what, const std::string& reason);

  const RunMetrics& m_metrics;
  MetricsTargets m_targets;
  Warn m_warn;
  std::shared_ptr<Transport> m_transport;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stopping = false;
  std::atomic<bool> m_abandon{false};  ///< Cancels the thread's push when finish() is called.
  bool m_file_failing = false;
  bool m_push_failing = false;
  std::thread m_thread;
};

}  // namespace clef::cli

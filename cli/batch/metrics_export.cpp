// The implementation of metrics_export.hpp.
#include "batch/metrics_export.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <string_view>

#include "clef/backend.hpp"
#include "common/replacement_file.hpp"
#include "common/terminal_text.hpp"

namespace clef::cli {
namespace {

/// Where a push goes: the Pushgateway's grouping key in the path, as its API defines it
/// (/metrics/job/JOB, then /shard/K for a shard so that each shard keeps its own group).
std::string push_address(const MetricsTargets& targets) {
  std::string url = targets.push_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  url += "/metrics/job/" + targets.job;
  if (!targets.shard.empty()) url += "/shard/" + targets.shard;
  return url;
}

bool plain_name(const std::string& name) {
  if (name.empty() || name.size() > 128 || name == "." || name == "..") return false;
  for (unsigned char c : name)
    if (!std::isalnum(c) && c != '_' && c != '.' && c != '-') return false;
  return true;
}

/// Whether `path` starts as an export writes it (an earlier run's file, replaced again as before).
bool holds_clef_metrics(const std::string& path) {
  static constexpr std::string_view start = "# HELP clef_";
  std::ifstream file(path, std::ios::binary);
  std::string head(start.size(), '\0');
  file.read(head.data(), static_cast<std::streamsize>(head.size()));
  return file.gcount() == static_cast<std::streamsize>(start.size()) && head == start;
}

}  // namespace

Status check_metrics_targets(const MetricsTargets& targets) {
  struct stat info {};
  if (!targets.file.empty() && ::lstat(targets.file.c_str(), &info) == 0 &&
      !S_ISREG(info.st_mode)) {
    return make_error(ErrorKind::invalid_input,
                      targets.file +
                          " is not a regular file (a device, a FIFO, a directory or a link), and "
                          "each export replaces the file whole: give a path of its own",
                      "--metrics-file");
  }
  if (!targets.file.empty() && S_ISREG(info.st_mode) && info.st_size > 0 &&
      !holds_clef_metrics(targets.file)) {
    return make_error(ErrorKind::invalid_input,
                      targets.file +
                          " holds something other than clef's metrics, and each export replaces "
                          "the file whole: remove it or give a path of its own",
                      "--metrics-file");
  }
  const std::string& url = targets.push_url;
  if (!url.empty()) {
    const bool http = url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
    bool printable = url.size() <= 2048;
    for (unsigned char c : url) printable = printable && c > 0x20 && c < 0x7f;
    if (!http || !printable || url.find_first_of("?#") != std::string::npos) {
      return make_error(ErrorKind::invalid_input,
                        "the Pushgateway's base URL, http(s)://HOST:PORT (no query, no spaces)",
                        "--metrics-push");
    }
  }
  if (!plain_name(targets.job)) {
    return make_error(ErrorKind::invalid_input,
                      "a job name of letters, digits, '_', '.' and '-' (at most 128)",
                      "--metrics-job");
  }
  if (!(targets.interval_seconds >= 0.1 && targets.interval_seconds <= 86400)) {
    return make_error(ErrorKind::invalid_input, "from 0.1 to 86400 seconds", "--metrics-interval");
  }
  return {};
}

MetricsExport::MetricsExport(const RunMetrics& metrics, MetricsTargets targets, Warn warn)
    : m_metrics(metrics),
      m_targets(std::move(targets)),
      m_warn(std::move(warn)),
      m_transport(m_targets.push_url.empty() ? nullptr : make_curl_transport()) {
  m_thread = std::thread([this] { run(); });
}

MetricsExport::~MetricsExport() {
  stop_thread();
}

void MetricsExport::finish() {
  stop_thread();
  export_now(true);
}

void MetricsExport::stop_thread() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stopping = true;
  }
  m_abandon = true;
  m_wake.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

void MetricsExport::run() {
  const auto interval = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::duration<double>(m_targets.interval_seconds));
  std::unique_lock<std::mutex> lock(m_mutex);
  // The first export at once: the run is there from its first second.
  while (!m_stopping) {
    lock.unlock();
    export_now(false);
    lock.lock();
    m_wake.wait_for(lock, interval, [&] { return m_stopping; });
  }
}

void MetricsExport::export_now(bool last) {
  const std::string text = m_metrics.text();
  if (!m_targets.file.empty()) {
    auto written = replace_file(m_targets.file, text);
    warn(m_file_failing, "cannot write the metrics file " + m_targets.file,
         written ? "" : written.error().message);
  }
  if (!m_transport) return;
  HttpRequest request;
  request.method = "PUT";
  request.url = push_address(m_targets);
  request.headers = {{"Content-Type", "text/plain; version=0.0.4"}};
  request.body = text;
  // The thread's pushes end when finish() is called; the last one is short, so a gateway that
  // does not answer holds up the run's end by 2 s at most.
  request.connect_timeout = std::chrono::milliseconds(last ? 1000 : 2000);
  request.total_timeout = std::chrono::milliseconds(last ? 2000 : 5000);
  if (!last) request.cancel = &m_abandon;
  request.max_response_bytes = 64 * 1024;
  request.ca_file = m_targets.ca_file;
  auto response = m_transport->send(request);
  // Abandoned because the run ended: the last push follows at once, and says how it went.
  if (!response && response.error().kind == ErrorKind::cancelled) return;
  std::string reason;
  if (!response) reason = response.error().message;
  if (response && (response->status < 200 || response->status > 299)) {
    reason = "HTTP " + std::to_string(response->status);
    const auto location =
        std::find_if(response->headers.begin(), response->headers.end(),
                     [](const auto& header) { return header.first == "location"; });
    if (response->status >= 300 && response->status <= 399 && location != response->headers.end()) {
      // A gateway behind a proxy that moved: say where, as clef follows no redirect.
      reason += ", a redirect to " + url_without_credentials(location->second.substr(0, 200)) +
                " (clef follows none: give the Pushgateway's own URL)";
    } else if (!response->body.empty()) {
      reason += ": " + response->body.substr(0, std::min<std::size_t>(response->body.size(), 200));
    }
  }
  warn(m_push_failing, "cannot push the metrics to " + url_without_credentials(request.url),
       reason);
}

void MetricsExport::warn(bool& failing, const std::string& what, const std::string& reason) {
  const bool failed = !reason.empty();
  if (failed && !failing && m_warn)
    m_warn("clef: warning: " + terminal_safe(what) + ": " + terminal_safe(reason) +
           " (the batch goes on; tried again every interval)\n");
  failing = failed;
}

}  // namespace clef::cli

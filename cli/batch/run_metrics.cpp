// The implementation of run_metrics.hpp: counting under one lock, and the text format.
#include "batch/run_metrics.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace clef::cli {
namespace {

/// A label value as the text format escapes it: backslash, double quote and newline.
std::string escaped(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

/// A sample value: the shortest text that reads back as the same double (integers as integers;
/// "%.17g" wrote the 5 ms bucket as le="0.0050000000000000001").
std::string number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char text[32];
  const auto written = std::to_chars(text, text + sizeof text, value);
  return std::string(text, written.ptr);
}

}  // namespace

/// Writes the HELP and TYPE lines of one metric, then its samples.
class Exposition {
 public:
  explicit Exposition(std::string constant_labels) : m_constant(std::move(constant_labels)) {}

  void family(const std::string& name, const char* type, const std::string& help) {
    m_out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
  }
  /// One sample; `labels` is `name="value",…` (already escaped) or empty.
  void sample(const std::string& name, const std::string& labels, double value) {
    std::string all = m_constant;
    if (!labels.empty()) all += (all.empty() ? "" : ",") + labels;
    m_out << name;
    if (!all.empty()) m_out << "{" << all << "}";
    m_out << " " << number(value) << "\n";
  }
  std::string text() const { return m_out.str(); }

 private:
  std::string m_constant;
  std::ostringstream m_out;
};

namespace {

std::string label(const char* name, const std::string& value) {
  return std::string(name) + "=\"" + escaped(value) + "\"";
}

}  // namespace

RunMetrics::RunMetrics(std::vector<std::string> hosts, std::size_t kept, std::string shard)
    : m_order(std::move(hosts)), m_shard(std::move(shard)), m_kept(kept) {
  for (const auto& host : m_order) m_hosts[host];
}

RunMetrics::Host& RunMetrics::host_named(const std::string& name) {
  // One client's results name no host: they are the one host's.
  if (name.empty() && m_order.size() == 1) return m_hosts[m_order.front()];
  auto found = m_hosts.find(name);
  if (found != m_hosts.end()) return found->second;
  m_order.push_back(name);
  return m_hosts[name];
}

void RunMetrics::read() {
  std::lock_guard<std::mutex> lock(m_mutex);
  ++m_read;
}

void RunMetrics::written(bool ok, const Decision* decision, const Error* error) {
  std::lock_guard<std::mutex> lock(m_mutex);
  ++(ok ? m_ok : m_failed);
  if (decision) {
    if (decision->cached) ++m_cached;
    if (decision->cost.usd) m_cost_usd += *decision->cost.usd;
    if (!decision->cost.known()) ++m_cost_unknown;
    Host& host = host_named(decision->host);
    ++host.answered;
    // A cache hit took no server's time: the histogram is of the servers' answers.
    if (!decision->cached) {
      const double seconds = std::chrono::duration<double>(decision->latency).count();
      ++host.observed;
      host.seconds += seconds;
      for (std::size_t i = 0; i < kBuckets.size(); ++i) {
        if (seconds <= kBuckets[i]) {
          ++host.buckets[i];
          break;
        }
      }
    }
  }
  // An error from a server names it with several hosts; with one, only errors that reached it
  // are its own (an unreadable input line never left clef).
  if (error &&
      (!error->host.empty() || (m_order.size() == 1 && error->kind != ErrorKind::invalid_input)))
    ++host_named(error->host).failed;
}

void RunMetrics::deduplicated() {
  std::lock_guard<std::mutex> lock(m_mutex);
  ++m_deduplicated;
}

void RunMetrics::not_done() {
  std::lock_guard<std::mutex> lock(m_mutex);
  ++m_not_done;
}

void RunMetrics::refused(const std::string& host) {
  std::lock_guard<std::mutex> lock(m_mutex);
  ++m_refused;
  ++host_named(host).refused;
}

void RunMetrics::finish(const BatchSummary& summary) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_refused = summary.throttled;
  for (const HostSummary& summarized : summary.hosts) {
    Host& host = host_named(summarized.host);
    host.answered = summarized.answered;
    host.failed = summarized.failed;
    host.refused = summarized.refused;
    host.ejections = summarized.ejections;
  }
  m_elapsed = std::chrono::steady_clock::now() - m_clock;
  m_finished = true;
}

std::string RunMetrics::text() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  Exposition out(m_shard.empty() ? "" : label("shard", m_shard));
  const double elapsed = std::chrono::duration<double>(
                             m_finished ? m_elapsed : std::chrono::steady_clock::now() - m_clock)
                             .count();
  write_items(out, elapsed);
  write_latency(out);
  write_hosts(out);
  out.family("clef_batch_start_time_seconds", "gauge", "When the run began, in Unix time.");
  out.sample("clef_batch_start_time_seconds", "",
             std::floor(std::chrono::duration<double>(m_started.time_since_epoch()).count()));
  out.family("clef_batch_elapsed_seconds", "gauge", "How long the run has taken so far.");
  out.sample("clef_batch_elapsed_seconds", "", elapsed);
  out.family("clef_batch_finished", "gauge", "1 once the run is over (the numbers are final).");
  out.sample("clef_batch_finished", "", m_finished ? 1 : 0);
  return out.text();
}

void RunMetrics::write_items(Exposition& out, double elapsed) const {
  const auto counter = [&](const std::string& name, const std::string& help, double value) {
    out.family(name, "counter", help);
    out.sample(name, "", value);
  };
  out.family("clef_decisions_total", "counter",
             "Items written by this run: ok (every answer valid) or failed (an error, or an "
             "answer that is not).");
  out.sample("clef_decisions_total", label("outcome", "ok"), static_cast<double>(m_ok));
  out.sample("clef_decisions_total", label("outcome", "failed"), static_cast<double>(m_failed));
  counter("clef_decisions_cached_total", "Items written from the cache (--cache).",
          static_cast<double>(m_cached));
  counter("clef_decisions_deduplicated_total", "Items written as copies of another's (--dedupe).",
          static_cast<double>(m_deduplicated));
  counter("clef_decisions_kept_total", "Results --resume kept from the run before this one.",
          static_cast<double>(m_kept));
  counter("clef_decisions_not_done_total",
          "Items read but left out of the output (the run stopped first): --resume sends them, and "
          "the items not yet read.",
          static_cast<double>(m_not_done));
  counter("clef_requests_refused_total", "429 and 503 answers (each item refused was sent again).",
          static_cast<double>(m_refused));
  out.family(
      "clef_decisions_pending", "gauge",
      "Items read and not yet written: in flight, waiting to be sent again, or read ahead "
      "(at most twice -j; with --ordered, answers held back for an earlier item too: about 8 x -j "
      "at most).");
  const std::size_t settled = m_ok + m_failed + m_not_done;
  out.sample("clef_decisions_pending", "",
             static_cast<double>(m_read > settled && !m_finished ? m_read - settled : 0));
  out.family("clef_decisions_per_second", "gauge", "Items written per second since the run began.");
  out.sample("clef_decisions_per_second", "",
             elapsed > 0 ? static_cast<double>(m_ok + m_failed) / elapsed : 0);
  counter("clef_cost_usd_total", "What this run's decisions cost, in US dollars, where known.",
          m_cost_usd);
  counter("clef_cost_unknown_total", "Decisions whose cost is not known (no price for them).",
          static_cast<double>(m_cost_unknown));
}

void RunMetrics::write_latency(Exposition& out) const {
  out.family("clef_decision_duration_seconds", "histogram",
             "From a decision's first attempt to its parsed answer (retries included), per host; "
             "cache hits are not counted.");
  for (const auto& name : m_order) {
    const Host& host = m_hosts.at(name);
    const std::string host_label = label("host", name);
    std::size_t cumulative = 0;
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += host.buckets[i];
      out.sample("clef_decision_duration_seconds_bucket",
                 host_label + "," + label("le", number(kBuckets[i])),
                 static_cast<double>(cumulative));
    }
    out.sample("clef_decision_duration_seconds_bucket", host_label + "," + label("le", "+Inf"),
               static_cast<double>(host.observed));
    out.sample("clef_decision_duration_seconds_sum", host_label, host.seconds);
    out.sample("clef_decision_duration_seconds_count", host_label,
               static_cast<double>(host.observed));
  }
}

void RunMetrics::write_hosts(Exposition& out) const {
  const auto per_host = [&](const std::string& name, const std::string& help,
                            std::size_t Host::*field) {
    out.family(name, "counter", help);
    for (const auto& host : m_order)
      out.sample(name, label("host", host), static_cast<double>(m_hosts.at(host).*field));
  };
  per_host("clef_host_answered_total", "Decisions each host returned.", &Host::answered);
  per_host("clef_host_failed_total", "Items written with each host's error.", &Host::failed);
  per_host("clef_host_refused_total", "Each host's 429 and 503 answers.", &Host::refused);
  per_host("clef_host_ejections_total",
           "Times each host was set aside for failing again and again (known at the end).",
           &Host::ejections);
}

}  // namespace clef::cli

// The implementation of batch_progress.hpp: clef batch's progress bar (on a terminal) and its final
// summary on stderr.
#include "batch/batch_progress.hpp"

#include <cstdio>
#include <ctime>

#include "common/interruptible_stderr.hpp"
#include "common/terminal_text.hpp"

namespace clef::cli {
namespace {

std::string format(const char* pattern, double a) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, a);
  return buffer;
}

std::string clock_time(std::chrono::system_clock::time_point when) {
  const std::time_t t = std::chrono::system_clock::to_time_t(when);
  std::tm local{};
  localtime_r(&t, &local);
  char buffer[16];
  std::strftime(buffer, sizeof buffer, "%H:%M:%S", &local);
  return buffer;
}

}  // namespace

void Progress::paused(std::chrono::system_clock::time_point until, const Error& why) {
  m_paused_until = until;
  m_pause_reason =
      why.http_status ? "HTTP " + std::to_string(why.http_status) : to_string(why.kind);
  if (m_tty) return draw(true);
  // One line a pause: items refused during it move its end a little, which is no news; a
  // pause pushed 5 s further is.
  if (std::chrono::system_clock::now() < m_printed_until &&
      until < m_printed_until + std::chrono::seconds(5))
    return;
  if (until - std::chrono::system_clock::now() >= std::chrono::milliseconds(500)) {
    m_printed_until = until;
    m_err << "clef: batch: paused until " << clock_time(until) << " (the server answered "
          << m_pause_reason << "; " << m_done << " written so far)\n"
          << std::flush;
  }
}

Progress::Progress(std::ostream& err, bool is_tty, std::optional<std::size_t> total_lines,
                   std::size_t resumed, std::string model)
    : m_err(err),
      m_tty(is_tty),
      m_total(total_lines),
      m_resumed(resumed),
      m_model(std::move(model)) {}

void Progress::finished(bool ok, const Decision* decision, const Error* error) {
  if (m_metrics) m_metrics->written(ok, decision, error);
  ++m_done;
  if (!ok) ++m_failed;
  if (decision && decision->cached) ++m_cached;
  if (decision) m_cost.add(decision->cost);
  if (decision) {
    for (const auto& answer : decision->answers) {
      // Every box is its own winner: counted as boxes, not one line per box in the summary.
      if (answer.ok()) ++m_labels[answer.question][answer.box() ? "box" : answer.winner()];
      if (answer.status == AnswerStatus::abstained) ++m_labels[answer.question]["(abstained)"];
    }
  }
  draw(false);
}

void Progress::draw(bool force) {
  if (!m_tty) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - m_last_draw < std::chrono::milliseconds(100)) return;
  m_last_draw = now;
  const double seconds = std::chrono::duration<double>(now - m_start).count();
  const double rate = seconds > 0 ? static_cast<double>(m_done) / seconds : 0;
  std::string line = "\r";
  if (m_total && *m_total > 0) {
    const std::size_t todo = *m_total > m_skipped ? *m_total - m_skipped : 0;
    const double fraction =
        todo ? std::min(1.0, static_cast<double>(m_done) / static_cast<double>(todo)) : 1.0;
    const int filled = static_cast<int>(fraction * 30);
    line += "[" + std::string(static_cast<std::size_t>(filled), '#') +
            std::string(static_cast<std::size_t>(30 - filled), '.') + "] ";
    line += std::to_string(m_done) + "/" + std::to_string(todo);
    if (rate > 0 && todo > m_done)
      line += "  ETA " + format("%.0fs", static_cast<double>(todo - m_done) / rate);
  } else {
    line += std::to_string(m_done) + " done";
  }
  line += "  " + format("%.1f/s", rate) + "  failures " + std::to_string(m_failed);
  if (std::chrono::system_clock::now() < m_paused_until) {
    line += "  paused until " + clock_time(m_paused_until) + " (" + m_pause_reason + ")";
  }
  line += "   ";
  // A redraw the next one replaces: dropped rather than waited for when stderr has no room (a
  // terminal stopped with Ctrl-S), since this thread may be the one turning the event loop.
  if (auto kept = kept_lines_of(m_err))
    kept->write_if_room(line);
  else
    m_err << line << std::flush;
}

void Progress::finish(const BatchSummary& summary) {
  if (m_metrics) m_metrics->finish(summary);
  if (m_tty) m_err << "\r\x1b[2K";
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  m_err << "clef: batch: " << m_done << " written, " << (m_done - m_failed) << " ok, " << m_failed
        << " failed";
  if (m_resumed) m_err << ", " << m_resumed << " kept from the last run";
  if (m_not_done) m_err << ", " << m_not_done << " not done";
  if (m_cached) m_err << ", " << m_cached << " from the cache";
  if (m_deduplicated) m_err << ", " << m_deduplicated << " deduplicated";
  if (summary.throttled) m_err << ", " << summary.throttled << " refused by the server (429/503)";
  m_err << " in " << format("%.2f", seconds) << " s ("
        << format("%.1f", seconds > 0 ? static_cast<double>(m_done) / seconds : 0) << "/s)\n";
  for (const auto& [question, labels] : m_labels) {
    m_err << "clef:   " << terminal_safe_line(question) << ":";
    for (const auto& [label, count] : labels)
      m_err << " " << terminal_safe_line(label) << " " << count;
    m_err << "\n";
  }
  m_cost.print(m_err, m_model);
  if (summary.hosts.size() > 1) {
    for (const HostSummary& host : summary.hosts) print_host(host);
  }
}

void Progress::print_host(const HostSummary& host) {
  m_err << "clef:   host " << terminal_safe_line(host.host) << ": " << host.answered << " answered";
  if (host.failed) m_err << ", " << host.failed << " failed";
  if (host.refused) m_err << ", " << host.refused << " refused (429/503)";
  if (host.moved) m_err << ", " << host.moved << " moved to another host";
  if (host.ejections == 1) m_err << ", set aside once";
  if (host.ejections > 1) m_err << ", set aside " << host.ejections << " times";
  m_err << "\n";
}

}  // namespace clef::cli

// The implementation of batch_job.hpp: one `clef batch` run's items in, results out.
#include "batch/batch_job.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>

#include "batch/item_images.hpp"
#include "clef/decision_json.hpp"
#include "clef/json.hpp"
#include "common/exit_codes.hpp"
#include "common/files.hpp"
#include "output/error_report.hpp"

namespace clef::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::uint64_t not_written = std::numeric_limits<std::uint64_t>::max();

}  // namespace

std::optional<Result<DecisionRequest>> BatchJob::next() {
  for (;;) {
    auto item = m_reader.next();  // may wait for a pipe: not under the lock
    if (!item) {
      m_input_ended = true;  // at its end, or its reading failed: finish() is told which
      return std::nullopt;
    }
    if (m_shard && !in_shard(*m_shard, item->id)) continue;  // another shard's
    const bool readable = item->state.ok();
    if (readable) {
      const std::string key = id_key(item->id);
      if (m_done.count(key)) {
        if (m_done_read.insert(key).second) {
          std::lock_guard<std::mutex> lock(m_mutex);
          m_progress.skipped();
          continue;
        }
        // OUT answers this id once, and the input has it again: which of its lines that answer
        // was for cannot be told. Not sent, and said, rather than skipped as if answered.
        item->state = make_error(
            ErrorKind::invalid_input,
            "id " + key +
                " is on an earlier input line too, and the output answers it once: that answer "
                "may be this line's or the earlier one's (--resume cannot tell which line it was "
                "for), so this line was not sent; give every input line its own id and run again "
                "with --overwrite",
            "line " + std::to_string(item->line));
      }
      if (!m_seen_ids.insert(key) && m_duplicate_ids++ == 0) m_first_duplicate = key;
    }
    const std::size_t index = m_next_index++;
    Pending pending{item->id, item->line, table_fields(*item)};
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_pending.emplace(index, std::move(pending));
      m_progress.read();
    }
    return request_of(std::move(*item), m_prototype, m_flags);
  }
}

Result<DecisionRequest> request_of(InputItem&& item, const DecisionRequest& prototype,
                                   const BatchFlags& flags) {
  if (!item.state) return item.state.error();
  DecisionRequest request = prototype;
  request.state = std::move(item.state).value();
  if (!flags.image_field.empty()) {
    // Read as the item is sent, so a night-long run holds only the images in flight.
    auto images = item_images(item.image, directory_of(flags.input));
    if (!images) {
      Error error = images.error();
      error.where =
          "line " + std::to_string(item.line) + ", " + flags.image_field + ": " + error.where;
      return error;
    }
    request.images = std::move(images).value();
  }
  return request;
}

void BatchJob::deliver(std::size_t index, Result<Decision>&& result) {
  std::lock_guard<std::mutex> lock(m_mutex);
  const Pending pending = take(index);
  if (!result && (result.error().kind == ErrorKind::cancelled ||
                  result.error().kind == ErrorKind::quota_exhausted)) {
    if (result.error().kind == ErrorKind::quota_exhausted && !m_quota) m_quota = result.error();
    m_progress.not_done();  // left out of OUTPUT: --resume decides it
    return;
  }
  if (!result && result.error().kind == ErrorKind::not_recorded) ++m_not_recorded;
  if (result && m_policy) m_policy->apply(result.value());
  const std::string line =
      m_table ? m_table->row(pending.fields, result) : json_line(pending, result);
  const bool ok = result && all_answered(result.value());
  add_to_group(Unwritten{index, pending.id, line, ok, std::move(result), {}});
}

void BatchJob::duplicate(std::size_t index, std::size_t first) {
  std::lock_guard<std::mutex> lock(m_mutex);
  write_group_locked();  // the first's line may be in the group: read back from the file
  const Pending pending = take(index);
  Json line = Json::object();
  line["id"] = pending.id;
  bool ok = false;
  if (!m_output || m_output->is_stream()) {
    if (first >= m_firsts.size() || !m_firsts[first].written) {
      m_progress.not_done();  // the first was not written: --resume decides this one
      return;
    }
    line["duplicate_of"] = m_firsts[first].id;
    ok = m_firsts[first].ok;  // counted as its first was, as with -o FILE
  } else {
    const std::uint64_t offset = first < m_offsets.size() ? m_offsets[first] : not_written;
    auto text = offset == not_written ? std::nullopt : m_output->read_line(offset);
    auto copied = text ? parse_json(*text, "a written line") : Result<Json>(Json());
    if (!copied || !copied->is_object()) {
      m_progress.not_done();  // the first was not written: --resume decides this one
      return;
    }
    line["duplicate_of"] = (*copied)["id"];
    for (auto& item : copied->items()) {
      if (item.key() != "id" && item.key() != "line") line[item.key()] = std::move(item.value());
    }
    // The copy cost nothing: its first's cost stays the first's (--resume and merge add lines up).
    if (line.contains("cost"))
      line["cost"] = to_json(Cost{0.0, CostSource::cached, std::nullopt, std::nullopt});
    ok = is_kept_result(line);
  }
  add_to_group(
      Unwritten{index, pending.id, dump_json(line), ok, std::nullopt, line["duplicate_of"]});
}

void BatchJob::write_group() {
  std::lock_guard<std::mutex> lock(m_mutex);
  write_group_locked();
}

void BatchJob::paused(std::chrono::system_clock::time_point until, const Error& why) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_progress.paused(until, why);
}

void BatchJob::refused(const std::string& host) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_progress.refused(host);
}

void BatchJob::warn(const std::string& line) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_context.err << line << std::flush;
}

bool BatchJob::should_stop() {
  const bool interrupted = m_context.stop && m_context.stop->load();
  if (interrupted && !m_interrupt_said) {
    m_interrupt_said = true;
    warn(
        "clef: interrupted: nothing new starts; the requests in flight finish and are written "
        "(interrupt again to abandon them)\n");
  }
  return m_write_failed || m_quota || interrupted;
}

std::optional<BatchEnd> BatchJob::cap_cost(std::optional<double> cap, const KeptCost& kept) {
  if (cap && m_shard && m_shard->count > 1) *cap /= static_cast<double>(m_shard->count);
  m_cost_cap = cap;
  m_spent_before = kept.spent;
  if (!cap || kept.unknown == 0) return std::nullopt;
  const std::string& model = m_flags.connection.model;
  print_error(m_context,
              "--max-cost cannot hold: " + std::to_string(kept.unknown) +
                  " line(s) --resume keeps have no known cost, and clef has no price for " + model,
              "give --price " + model +
                  "=INPUT[,OUTPUT] (dollars per million tokens) to price them; nothing was sent");
  return BatchEnd{as_int(ExitCode::usage)};
}

std::string BatchJob::how_to_go_on(const std::string& to) const {
  if (!m_flags.after_interrupt.empty()) return m_flags.after_interrupt;
  // --resume reads OUTPUT back: only a file written as JSONL can be.
  if (m_flags.output_format == "jsonl" && !m_flags.output.empty() && m_flags.output != "-")
    return "run again with --resume to " + to;
  return "run again whole: --resume goes on only from JSONL written to -o FILE";
}

/// --max-cost's two stops: the cap reached (exit 3, like a provider's budget), or a decision
/// whose cost is unknown, so that no cap could hold (exit 2: a price is missing).
std::optional<BatchEnd> BatchJob::cost_stop(const BatchSummary& summary) const {
  if (summary.cost_unknown) {
    const std::string& model = m_flags.connection.model;
    print_error(m_context,
                "--max-cost cannot hold: the server measured no cost for a decision and clef has "
                "no price for " +
                    model,
                "give --price " + model +
                    "=INPUT[,OUTPUT] (dollars per million tokens), then run again with --resume");
    return BatchEnd{as_int(ExitCode::usage)};
  }
  if (!summary.cost_cap_reached || !m_cost_cap) return std::nullopt;
  const double spent = m_spent_before.usd + summary.spent_usd;
  print_error(m_context,
              "the cost cap of " + dollars_in_message(*m_cost_cap) +
                  (m_shard && m_shard->count > 1 ? " (this shard's share of --max-cost)" : "") +
                  " is reached: " + dollars_in_message(spent) + " spent (" +
                  dollars_in_message(summary.spent_usd) +
                  " in this run), and the next request could have passed it",
              "nothing more was sent; raise --max-cost and " + how_to_go_on("go on"));
  return BatchEnd{as_int(ExitCode::authentication)};
}

BatchEnd BatchJob::finish(const BatchSummary& summary, bool input_read_whole) {
  write_group();  // the engine calls it after every group; a caller that did not is covered
  m_progress.finish(summary);
  warn_of_ids(input_read_whole && m_input_ended);
  if (m_write_failed) return {report_write_failure()};
  if (m_quota) {
    // The error names the budget (a daily allocation and when it renews, credit, a spend limit).
    print_error(m_context, m_quota->to_string(),
                "nothing more was sent; run the same command with --resume once that budget "
                "allows more");
    return {as_int(ExitCode::authentication)};
  }
  if (auto stop = cost_stop(summary)) return *stop;
  // The server is not there at all: the run stopped instead of failing every item.
  if (summary.unreachable) return {report(m_context, *summary.unreachable, m_flags.connection)};
  if (m_context.stop && m_context.stop->load()) {
    // A signal while the last answers were coming: they were waited for and written, and a
    // --resume would find nothing to do (it redoes failed items: none).
    if (input_read_whole && m_input_ended && m_progress.left_undone() == 0 &&
        m_progress.failures() == 0) {
      m_context.err << "clef: interrupted after every item was decided and written: nothing is "
                       "left for --resume\n";
    } else {
      m_context.err << "clef: interrupted; " << how_to_go_on("finish the rest") << "\n";
    }
    return {as_int(ExitCode::interrupted)};
  }
  if (m_not_recorded) {
    print_error(m_context,
                std::to_string(m_not_recorded) +
                    " item(s) have no recording in the cassette (their "
                    "lines say which questions and state)",
                "record them with --record against a server");
    return {as_int(ExitCode::not_recorded)};
  }
  return {as_int(m_progress.failures() > 0 ? ExitCode::partial_failure : ExitCode::ok), true};
}

void BatchJob::warn_of_ids(bool input_read_whole) const {
  if (m_duplicate_ids) {
    m_context.err << "clef: warning: " << m_duplicate_ids
                  << " input line(s) repeat an earlier id (first: " << m_first_duplicate
                  << "); each has its own output line, but --resume cannot tell them apart: it "
                     "refuses to continue a file that answers one id twice\n";
  }
  // Only a whole reading knows an id is not there; a shard skips other shards' ids unread, but
  // its output holds none of them.
  if (!input_read_whole || m_done_read.size() >= m_done.size()) return;
  const auto stranger = std::find_if(m_done.begin(), m_done.end(), [&](const std::string& id) {
    return m_done_read.count(id) == 0;
  });
  m_context.err << "clef: warning: " << m_done.size() - m_done_read.size()
                << " line(s) kept from the last run answer ids the input no longer has (one: "
                << *stranger << "); they are still in the output\n";
}

std::string BatchJob::json_line(const Pending& pending, const Result<Decision>& result) {
  // Written as text, not through a JSON value: one per decision (the same bytes either way).
  std::string line;
  line.reserve(512);  // a decision's line, grown once rather than five times
  line += "{\"id\":";
  append_id(line, pending.id);
  if (pending.id.is_null()) line += ",\"line\":" + std::to_string(pending.line);
  line += ',';
  if (result) {
    append_json_members(line, result.value());
    // Batch lines only: `ask --json` stays the same bytes for the same answer.
    line += ",\"latency_ms\":";
    append_json_number(line, static_cast<double>(result->latency.count()) / 1000.0);
  } else {
    line += "\"error\":" + dump_json(to_json(result.error()));
  }
  line += '}';
  return line;
}

std::vector<std::string> BatchJob::table_fields(const InputItem& item) const {
  if (!m_table) return {};
  if (!item.columns.empty()) return item.columns;
  if (item.id.is_string()) return {item.id.get<std::string>()};
  return {item.id.is_null() ? std::string() : dump_json(item.id)};
}

BatchJob::Pending BatchJob::take(std::size_t index) {
  auto it = m_pending.find(index);
  Pending pending = std::move(it->second);
  m_pending.erase(it);
  return pending;
}

void BatchJob::add_to_group(Unwritten&& item) {
  // Once a write failed, later results are not tried (each would be cut back again): they are
  // not done, counted as such, and --resume sends them.
  if (m_write_failed) {
    m_progress.not_done();
    return;
  }
  m_group.push_back(std::move(item));
}

void BatchJob::write_group_locked() {
  if (m_group.empty()) return;
  const std::vector<Unwritten> items = std::move(m_group);
  m_group.clear();
  std::size_t written = 0;
  const auto offset = write_lines(items, written);
  const int write_errno = errno;
  std::uint64_t at = offset.value_or(0);
  for (std::size_t i = 0; i < written; ++i) {
    count_written(items[i], at);
    at += items[i].line.size() + 1;
  }
  if (offset) return;
  m_write_errno = write_errno;
  m_write_failed = true;
  for (std::size_t i = written; i < items.size(); ++i) m_progress.not_done();
}

std::optional<std::uint64_t> BatchJob::write_lines(const std::vector<Unwritten>& items,
                                                   std::size_t& written) {
  if (!m_output) {
    written = items.size();
    return 0;
  }
  if (m_output->is_stream()) {
    for (const Unwritten& item : items) {
      if (!m_output->write_line(item.line)) return std::nullopt;
      ++written;
    }
    return 0;
  }
  std::string lines;
  for (const Unwritten& item : items) {
    if (!lines.empty()) lines += '\n';
    lines += item.line;
  }
  const auto offset = m_output->write_line(lines);
  if (offset) written = items.size();
  return offset;
}

void BatchJob::count_written(const Unwritten& item, std::uint64_t offset) {
  remember_written(item, offset);
  if (item.result) {
    if (m_observer) m_observer->result(item.id, *item.result);
    const Result<Decision>& result = *item.result;
    m_progress.finished(item.ok, result ? &result.value() : nullptr,
                        result ? nullptr : &result.error());
  } else {
    if (m_observer) m_observer->duplicate(item.id, item.duplicate_of);
    m_progress.finished(item.ok, nullptr);
    m_progress.deduplicated();
  }
}

void BatchJob::remember_written(const Unwritten& item, std::uint64_t offset) {
  if (!m_flags.dedupe) return;
  if (!m_output || m_output->is_stream()) {
    if (m_firsts.size() <= item.index) m_firsts.resize(item.index + 1);
    m_firsts[item.index] = {item.id, item.ok, true};
  } else {
    if (m_offsets.size() <= item.index) m_offsets.resize(item.index + 1, not_written);
    m_offsets[item.index] = offset;
  }
}

int BatchJob::report_write_failure() const {
  if (m_write_errno == EINTR && m_context.stop && m_context.stop->load()) {
    print_error(m_context, "interrupted while waiting for " + m_flags.output + "'s reader; " +
                               std::to_string(m_progress.written()) +
                               " line(s) were written before it");
    return as_int(ExitCode::interrupted);
  }
  if (m_output->is_stdout()) {
    const std::string why = m_write_errno == EPIPE ? "its reader closed it (as `| head` does)"
                                                   : std::string(std::strerror(m_write_errno));
    print_error(m_context,
                "stopped: stdout cannot be written, " + why + "; " +
                    std::to_string(m_progress.written()) +
                    (m_progress.written() == 1 ? " line was" : " lines were") +
                    " written before it, and no new request was started",
                "to keep every result, write to a file with -o FILE");
  } else {
    print_error(m_context,
                "cannot write to " + m_flags.output + ": " +
                    std::string(std::strerror(m_write_errno)) +
                    "; the results written so far are intact",
                m_output->is_stream() ? "a FIFO, pipe or device cannot be resumed: write to a "
                                        "file with -o FILE to keep every result"
                : m_write_errno == EFBIG
                    ? "a file-size limit stopped it (ulimit -f): raise it, then run again with "
                      "--resume"
                    : "free space or fix the path, then run again with --resume");
  }
  return as_int(ExitCode::output);
}

}  // namespace clef::cli

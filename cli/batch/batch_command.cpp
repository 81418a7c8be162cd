// The implementation of batch_command.hpp: `clef batch`.
#include "batch/batch_command.hpp"

#include <stdlib.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "batch/batch_input.hpp"
#include "batch/batch_output.hpp"
#include "batch/batch_progress.hpp"
#include "batch/batch_shard.hpp"
#include "batch/batch_table.hpp"
#include "batch/item_images.hpp"
#include "clef/batch.hpp"
#include "clef/decision_json.hpp"
#include "clef/digest.hpp"
#include "clef/json.hpp"
#include "commands/cassette_run.hpp"
#include "common/exit_codes.hpp"
#include "common/file_roles.hpp"
#include "common/files.hpp"
#include "common/input_file.hpp"
#include "flags/hosts.hpp"
#include "flags/policy_flag.hpp"
#include "flags/request_builder.hpp"
#include "output/error_report.hpp"

namespace clef::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::uint64_t not_written = std::numeric_limits<std::uint64_t>::max();

std::string canonical_input(const std::string& path) {
  if (path == "-") return "-";
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (!resolved) return path;
  std::string out = resolved;
  ::free(resolved);
  return out;
}

/// Where the run sends: the one host's endpoint; for several, the path they share, since hosts
/// join and leave a fleet between a run and its --resume (the model is what must not change).
std::string endpoint_of(const std::vector<Client>& clients, const DecisionRequest& prototype) {
  const Client& client = clients.front();
  std::string endpoint = client.endpoint(prototype);
  if (clients.size() == 1) return endpoint;
  const std::string& base = client.options().base_url;
  if (endpoint.compare(0, base.size(), base) == 0) endpoint.erase(0, base.size());
  return "several hosts: " + endpoint;
}

/// What this run is, for the record beside OUT that --resume checks.
Result<RunRecord> describe_run(const BatchFlags& flags, InputFormat format,
                               const std::vector<Client>& clients, const DecisionRequest& prototype,
                               const std::optional<Shard>& shard) {
  const Client& client = clients.front();
  DecisionRequest probe = prototype;
  probe.state = State::text("x");
  if (!flags.image_field.empty()) {
    // Each item brings its own image: the run is checked with a stand-in the state names.
    probe.images.push_back(stand_in_image());
    probe.state = State::text("image_1");
  }
  auto body = client.request_body(probe);
  if (!body) return body.error();
  auto questions_digest = questions_sha256(prototype.questions);
  if (!questions_digest) return questions_digest.error();
  static const char* format_names[] = {"jsonl", "csv", "tsv", "text"};
  RunRecord record;
  record.fields = {
      {"backend", to_string(client.options().backend)},
      {"endpoint", endpoint_of(clients, prototype)},
      {"model", client.options().model},
      {"questions_sha256", questions_digest.value()},
      {"request_sha256", sha256_hex(body.value())},
      {"input", canonical_input(flags.input)},
      {"input_format", format_names[static_cast<int>(format)]},
      {"id_field", format == InputFormat::text ? "" : flags.id_field},
      {"state_field", format == InputFormat::text ? "" : flags.state_field},
  };
  if (!flags.image_field.empty()) record.fields.emplace_back("image_field", flags.image_field);
  // Recorded only when it is not JSONL, so older records (all JSONL) still match: clef merge
  // joins JSONL shards only.
  if (flags.output_format != "jsonl")
    record.fields.emplace_back("output_format", flags.output_format);
  if (shard) {
    // What clef merge checks the shards by: the same input bytes, split the same way.
    auto input = file_sha256(flags.input, "the input");
    if (!input) return input.error();
    record.fields.emplace_back("shard", shard->text());
    record.fields.emplace_back("input_sha256", input.value());
  }
  return record;
}

/// The source, the sink and the stop rule of one `clef batch` run. The engine calls all three
/// under one lock, so nothing here needs its own.
class BatchJob {
 public:
  BatchJob(const BatchFlags& flags, const Context& context, InputReader& reader, OutputFile* output,
           Progress& progress, const std::unordered_set<std::string>& done,
           const DecisionRequest& prototype, const ResultTable* table, const Policy* policy,
           ResultObserver* observer, std::optional<Shard> shard)
      : m_flags(flags),
        m_context(context),
        m_reader(reader),
        m_output(output),
        m_progress(progress),
        m_done(done),
        m_prototype(prototype),
        m_table(table),
        m_policy(policy),
        m_observer(observer),
        m_shard(shard) {}

  std::optional<Result<DecisionRequest>> next() {
    for (;;) {
      auto item = m_reader.next();
      if (!item) return std::nullopt;
      if (m_shard && !in_shard(*m_shard, item->id)) continue;  // another shard's
      const bool readable = item->state.ok();
      if (readable) {
        const std::string key = id_key(item->id);
        if (m_done.count(key)) {
          m_progress.skipped();
          continue;
        }
        // A 64-bit hash per id, not the id: a collision (odds ~1e-8 at a million ids) could
        // only add a false count to the warning, never change a result.
        if (!m_seen_ids.insert(std::hash<std::string>{}(key)).second && m_duplicate_ids++ == 0)
          m_first_duplicate = key;
      }
      const std::size_t index = m_next_index++;
      m_pending.emplace(index, Pending{item->id, item->line, table_fields(*item)});
      if (!readable) return Result<DecisionRequest>(item->state.error());
      DecisionRequest request = m_prototype;
      request.state = std::move(item->state).value();
      if (!m_flags.image_field.empty()) {
        // Read as the item is sent, so a night-long run holds only the images in flight.
        auto images = item_images(item->image, directory_of(m_flags.input));
        if (!images) {
          Error error = images.error();
          error.where = "line " + std::to_string(item->line) + ", " + m_flags.image_field + ": " +
                        error.where;
          return Result<DecisionRequest>(std::move(error));
        }
        request.images = std::move(images).value();
      }
      return Result<DecisionRequest>(std::move(request));
    }
  }

  void deliver(std::size_t index, Result<Decision>&& result) {
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
    if (!write(index, pending.id, line, ok)) return;
    if (m_observer) m_observer->result(pending.id, result);
    m_progress.finished(ok, result ? &result.value() : nullptr);
  }

  /// Item `index` asked what item `first` asked: copy first's line under this item's id.
  void duplicate(std::size_t index, std::size_t first) {
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
      ok = is_kept_result(line);
    }
    if (!write(index, pending.id, dump_json(line), ok)) return;
    if (m_observer) m_observer->duplicate(pending.id, line["duplicate_of"]);
    m_progress.finished(ok, nullptr);
  }

  bool should_stop() const {
    return m_write_failed || m_quota || (m_context.stop && m_context.stop->load());
  }

  BatchEnd finish(const BatchSummary& summary) {
    m_progress.finish(summary);
    if (m_duplicate_ids) {
      m_context.err << "clef: warning: " << m_duplicate_ids
                    << " input line(s) repeat an earlier id (first: " << m_first_duplicate
                    << "); each has its own output line, and --resume treats them as one id\n";
    }
    if (m_write_failed) return {report_write_failure()};
    if (m_quota) {
      print_error(m_context, m_quota->to_string(),
                  m_flags.connection.backend == Backend::workers_ai
                      ? "the daily allocation is used up: nothing more was sent; run the same "
                        "command with --resume when it renews"
                      : "the account's quota is used up: nothing more was sent; run the same "
                        "command with --resume once it is topped up");
      return {as_int(ExitCode::authentication)};
    }
    // The server is not there at all: the run stopped instead of failing every item.
    if (summary.unreachable) return {report(m_context, *summary.unreachable, m_flags.connection)};
    if (m_context.stop && m_context.stop->load()) {
      m_context.err << "clef: interrupted; run again with --resume to finish the rest\n";
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

 private:
  struct Pending {
    Json id;
    std::size_t line = 0;
    std::vector<std::string> fields;  ///< --output-format csv|tsv: the input's own cells.
  };

  /// The JSONL line of one item: its id with the decision, or with the error.
  static std::string json_line(const Pending& pending, const Result<Decision>& result) {
    Json line = Json::object();
    line["id"] = pending.id;
    if (pending.id.is_null()) line["line"] = pending.line;
    if (result) {
      Json decision = to_json(result.value());
      for (auto& item : decision.items()) line[item.key()] = std::move(item.value());
      // Batch lines only: `ask --json` stays the same bytes for the same answer.
      line["latency_ms"] = static_cast<double>(result->latency.count()) / 1000.0;
    } else {
      line["error"] = to_json(result.error());
    }
    return dump_json(line);
  }

  /// The cells a table row repeats: the CSV/TSV row as read, else the id.
  std::vector<std::string> table_fields(const InputItem& item) const {
    if (!m_table) return {};
    if (!item.columns.empty()) return item.columns;
    if (item.id.is_string()) return {item.id.get<std::string>()};
    return {item.id.is_null() ? std::string() : dump_json(item.id)};
  }

  Pending take(std::size_t index) {
    auto it = m_pending.find(index);
    Pending pending = std::move(it->second);
    m_pending.erase(it);
    return pending;
  }

  /// Writes the line (nothing without OUTPUT); false when the write failed.
  bool write(std::size_t index, const Json& id, const std::string& line, bool ok) {
    const auto offset = m_output ? m_output->write_line(line) : std::optional<std::uint64_t>(0);
    if (!offset) {
      if (!m_write_failed) m_write_errno = errno;
      m_write_failed = true;
      return false;
    }
    if (!m_flags.dedupe) return true;
    if (!m_output || m_output->is_stream()) {
      if (m_firsts.size() <= index) m_firsts.resize(index + 1);
      m_firsts[index] = {id, ok, true};
    } else {
      if (m_offsets.size() <= index) m_offsets.resize(index + 1, not_written);
      m_offsets[index] = *offset;
    }
    return true;
  }

  int report_write_failure() const {
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
      print_error(
          m_context,
          "cannot write to " + m_flags.output + ": " + std::string(std::strerror(m_write_errno)) +
              "; the results written so far are intact",
          m_output->is_stream() ? "a FIFO, pipe or device cannot be resumed: write to a "
                                  "file with -o FILE to keep every result"
                                : "free space or fix the path, then run again with --resume");
    }
    return as_int(ExitCode::output);
  }

  const BatchFlags& m_flags;
  const Context& m_context;
  InputReader& m_reader;
  OutputFile* m_output;  ///< None: results only go to the observer.
  Progress& m_progress;
  const std::unordered_set<std::string>& m_done;
  const DecisionRequest& m_prototype;
  const ResultTable* m_table;
  const Policy* m_policy;
  ResultObserver* m_observer;
  std::optional<Shard> m_shard;

  std::unordered_map<std::size_t, Pending> m_pending;  ///< Only the items in flight.
  std::size_t m_next_index = 0;
  std::unordered_set<std::size_t> m_seen_ids;  ///< Hashes of the ids read, for the warning.
  std::size_t m_duplicate_ids = 0;
  std::string m_first_duplicate;
  std::vector<std::uint64_t> m_offsets;  ///< --dedupe to a file: where each item's line is.
  /// --dedupe to stdout, where a line cannot be read back: what each item's line said.
  struct WrittenLine {
    Json id;
    bool ok = false;
    bool written = false;
  };
  std::vector<WrittenLine> m_firsts;
  std::size_t m_not_recorded = 0;  ///< --replay: items the cassette has no recording of.
  bool m_write_failed = false;
  int m_write_errno = 0;
  std::optional<Error> m_quota;
};

}  // namespace

void add_batch_run_flags(CLI::App& batch, BatchFlags& flags) {
  batch.add_option("--input-format", flags.input_format,
                   "jsonl | csv | tsv | text (default: from the name)");
  batch.add_option("--id-field", flags.id_field, "Field or column holding the id")
      ->capture_default_str();
  batch.add_option("--state-field", flags.state_field, "Field or column holding the state")
      ->capture_default_str();
  batch
      .add_option("--state-columns", flags.state_columns,
                  "CSV/TSV: the state is a JSON object of these columns, in this order (a,b,c)")
      ->delimiter(',')
      ->allow_extra_args(false);
  batch.add_option("--image-field", flags.image_field,
                   "Field or column naming each item's image file (or a JSON array of files), "
                   "read from the input's directory when relative");
  add_question_flags(batch, flags.questions);
  batch.add_option("-j,--concurrency", flags.concurrency, "Requests in flight")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  batch
      .add_option("--rate", flags.rate,
                  "At most this many requests per second (0 = no cap; at least one a day, "
                  "1/86400, at most 1000000)")
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            // What the clock can honour: slower than one a day is not a rate but a stop, and a
            // rate of 1e-10 would overflow the wait between two requests.
            // Nothing strtod skips or rounds away: no white space, and no value so small it
            // underflows to 0 ("no cap") with ERANGE, as 1e-400 does.
            char* end = nullptr;
            errno = 0;
            const double rate = text.empty() || std::isspace(static_cast<unsigned char>(text[0]))
                                    ? -1
                                    : std::strtod(text.c_str(), &end);
            if (end == nullptr || end == text.c_str() || *end != '\0' || errno == ERANGE ||
                !std::isfinite(rate) || rate < 0 ||
                (rate != 0 && (rate < 1.0 / 86400 || rate > 1e6)))
              return "--rate must be 0 (no cap) or from 1/86400 (one a day) to 1000000, not " +
                     text;
            return std::string();
          },
          "RATE", "rate"));
  batch
      .add_option("--per-host", flags.per_host,
                  "Several hosts: at most this many requests in flight on one (0 = -j only)")
      ->check(CLI::Range(0, 10000));
  batch.add_flag("--state-affinity", flags.state_affinity,
                 "Several hosts: send each state to its own host (rendezvous hash), the least "
                 "busy one when that host is full");
  batch
      .add_option("--throttle-budget", flags.throttle_budget_seconds,
                  "Seconds one item may spend throttled (429/503 pauses) before it is written as "
                  "a rate_limited error")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  batch.add_flag("--dedupe", flags.dedupe, "Send identical states once");
  batch.add_option("--keep-alive", flags.keep_alive,
                   "Ollama: keep the model loaded (seconds or 5m)");
  add_connection_flags(batch, flags.connection);
  add_hosts_flags(batch, flags.connection);
}

CLI::App* add_batch_command(CLI::App& app, BatchFlags& flags) {
  CLI::App* batch =
      app.add_subcommand("batch", "Decide every state in a JSONL, CSV/TSV or text file");
  batch->footer(
      "Examples:\n"
      "  clef batch tickets.jsonl -q questions.json -o routed.jsonl -j 16\n"
      "  clef batch tickets.jsonl -q questions.json -o routed.jsonl --resume\n"
      "  clef batch tickets.csv --state-columns subject,body -q questions.json --output-format "
      "csv\n"
      "  clef batch tickets.jsonl -q questions.json --host http://gpu1:11434 \\\n"
      "    --host http://gpu2:11434 -j 32 -o routed.jsonl\n");
  batch->add_option("INPUT", flags.input, "Input file ('-' = stdin)")->required();
  batch->add_option("-o,--output", flags.output, "Output JSONL file ('-' = stdout)")
      ->capture_default_str();
  add_batch_run_flags(*batch, flags);
  batch->add_flag("--ordered", flags.ordered, "Write results in input order");
  batch->add_flag("--resume", flags.resume,
                  "Keep OUTPUT's successful results and decide the rest (same run only)");
  batch->add_flag("--force-resume", flags.force_resume,
                  "With --resume: continue even if OUTPUT was written by a different run");
  batch->add_flag("--overwrite", flags.overwrite, "Replace an existing OUTPUT");
  batch
      ->add_option("--output-format", flags.output_format,
                   "jsonl | csv | tsv (csv/tsv: the input's columns, then per question its "
                   "winner, probability and confidence)")
      ->check(CLI::IsMember({"jsonl", "csv", "tsv"}))
      ->capture_default_str();
  batch
      ->add_option("--policy", flags.policy,
                   "Thresholds from `clef eval --fit-thresholds`: an answer below its "
                   "threshold is written with status \"abstained\"")
      ->type_name("FILE");
  batch->add_option("--shard", flags.shard,
                    "K/N: decide only shard K of N (0 to N-1) of INPUT, by a hash of each id; "
                    "auto: K (and N) from a Kubernetes Indexed Job or Slurm array; then clef "
                    "merge");
  batch->add_option("--shards", flags.shards,
                    "N, for --shard auto in a Kubernetes Indexed Job (its completions)");
  return batch;
}

/// Flags that contradict each other are refused, never silently resolved.
Status check_flags(const BatchFlags& flags) {
  auto refuse = [](const std::string& message, const char* where) {
    return make_error(ErrorKind::invalid_input, message, where);
  };
  if (flags.resume && flags.output == "-") {
    return refuse("--resume needs -o FILE: results written to stdout cannot be read back",
                  "--resume");
  }
  if (flags.resume && flags.overwrite) {
    return refuse("--resume keeps OUTPUT and --overwrite replaces it: give one", "--resume");
  }
  if (flags.force_resume && !flags.resume) {
    return refuse("--force-resume goes with --resume", "--force-resume");
  }
  return {};
}

namespace {

/// Flags that only make sense with a CSV/TSV input, or with JSONL output, are refused elsewhere.
Status check_format_flags(const BatchFlags& flags, const CLI::App& command, InputFormat format) {
  const bool delimited = format == InputFormat::csv || format == InputFormat::tsv;
  if (!flags.state_columns.empty() && !delimited) {
    return make_error(ErrorKind::invalid_input, "--state-columns reads CSV or TSV input",
                      "--state-columns");
  }
  if (!flags.state_columns.empty() && command.count("--state-field") > 0) {
    return make_error(ErrorKind::invalid_input,
                      "give the state one way: --state-field or --state-columns",
                      "--state-columns");
  }
  if (!flags.image_field.empty() && format == InputFormat::text) {
    return make_error(ErrorKind::invalid_input,
                      "--image-field names a field of JSONL or a column of CSV/TSV, and text "
                      "lines have neither",
                      "--image-field");
  }
  if (flags.output_format != "jsonl" && (flags.resume || flags.dedupe)) {
    return make_error(ErrorKind::invalid_input,
                      std::string(flags.resume ? "--resume" : "--dedupe") +
                          " reads OUTPUT back, which needs --output-format jsonl",
                      "--output-format");
  }
  return {};
}

Result<std::unique_ptr<InputReader>> open_reader(const BatchFlags& flags, InputFormat format,
                                                 InputFile& input) {
  auto reader =
      make_reader(input.stream(), format,
                  {flags.id_field, flags.state_field, flags.state_columns, {}, flags.image_field});
  if (!reader) {
    Error error = reader.error();
    error.where = flags.input + ": " + error.where;
    return error;
  }
  return reader;
}

BatchSummary run_job(const std::vector<Client>& clients, const BatchFlags& flags,
                     std::size_t concurrency, BatchJob& job, Progress& progress) {
  BatchOptions options;
  options.concurrency = concurrency;
  options.per_host = flags.per_host;
  options.state_affinity = flags.state_affinity;
  options.max_requests_per_second = flags.rate;
  options.throttle_budget =
      std::chrono::milliseconds(static_cast<long long>(flags.throttle_budget_seconds * 1000));
  options.ordered = flags.ordered;
  options.dedupe = flags.dedupe;
  options.should_stop = [&] { return job.should_stop(); };
  options.stop_when_unreachable = true;  // a batch against no server stops instead of failing all
  options.on_duplicate = [&](std::size_t index, std::size_t first) { job.duplicate(index, first); };
  options.on_pause = [&](std::chrono::system_clock::time_point until, const Error& why) {
    progress.paused(until, why);
  };
  adapt_batch_options(flags.connection, clients.front(), options);
  return run_batch(
      clients, [&] { return job.next(); },
      [&](std::size_t index, Result<Decision>&& result) { job.deliver(index, std::move(result)); },
      options);
}

}  // namespace

int run_batch_command(const BatchFlags& flags, const CLI::App& command, const Context& context) {
  if (auto status = check_flags(flags); !status) {
    return report(context, status.error(), flags.connection);
  }
  auto questions = collect_questions(flags.questions, command);
  if (!questions) return report(context, questions.error(), flags.connection);
  std::string recognised_by;
  auto format = flags.input_format.empty()
                    ? Result<InputFormat>(guess_input_format(flags.input, &recognised_by))
                    : parse_input_format(flags.input_format);
  if (!format) return report(context, format.error(), flags.connection);
  if (!recognised_by.empty())
    note_input_format(context, flags.input, format.value(), recognised_by);
  return run_batch_engine(flags, command, questions.value(), format.value(), context, nullptr)
      .exit_code;
}

namespace {

/// OUTPUT opened (none when flags.output is empty), with the header row of a table format.
std::optional<BatchEnd> open_output(const BatchFlags& flags, const RunRecord& record,
                                    const Context& context, ResultObserver* observer,
                                    std::unordered_set<std::string>& done,
                                    std::optional<OutputFile>& output) {
  if (flags.output.empty()) return std::nullopt;
  OutputOptions options{flags.resume, flags.overwrite, flags.force_resume, {}, context.stop};
  if (observer) options.on_kept = [observer](const Json& line) { observer->kept(line); };
  bool io_failed = false;
  auto opened = OutputFile::open(flags.output, options, record, done, context.out, io_failed);
  if (!opened) {
    print_error(context, opened.error().message + " (" + opened.error().where + ")");
    if (opened.error().kind == ErrorKind::cancelled)  // SIGINT while waiting for a FIFO's reader
      return BatchEnd{as_int(ExitCode::interrupted), false, false};
    return BatchEnd{as_int(io_failed ? ExitCode::output : ExitCode::usage), false, !io_failed};
  }
  output.emplace(std::move(opened).value());
  return std::nullopt;
}

/// What a batch writes: OUTPUT (stdout by default) and a --record cassette.
std::vector<NamedFile> batch_outputs(const BatchFlags& flags) {
  return {{"the output", flags.output}, {"--record", flags.connection.record}};
}

/// What a batch reads before and while it runs (the items' images excepted).
std::vector<NamedFile> batch_inputs(const BatchFlags& flags) {
  std::vector<NamedFile> inputs = {{"the input", flags.input},
                                   {"--hosts", flags.connection.hosts_file},
                                   {"--policy", flags.policy},
                                   {"--api-token-file", flags.connection.api_token_file},
                                   {"--aig-token-file", flags.connection.gateway.token_file},
                                   {"--replay", flags.connection.replay}};
  for (const auto& file : flags.questions.files) inputs.push_back({"--questions", file});
  return inputs;
}

std::optional<std::size_t> input_items(const BatchFlags& flags, InputFormat format) {
  std::optional<std::size_t> total = count_lines(flags.input);
  const bool header = format == InputFormat::csv || format == InputFormat::tsv;
  if (total && header && *total > 0) --*total;
  return total;
}

/// What is refused before anything is opened: a --record into the input or output, flags for
/// another format, an output that is one of the inputs.
Status check_files(const BatchFlags& flags, const CLI::App& command, InputFormat format) {
  if (auto status = check_record_path(flags.connection,
                                      {{"the input", flags.input}, {"the output", flags.output}});
      !status) {
    return status;
  }
  if (auto status = check_format_flags(flags, command, format); !status) return status;
  if (auto status = check_no_output_is_an_input(batch_outputs(flags), batch_inputs(flags));
      !status) {
    return status;
  }
  // stderr (progress, -v) may be a file the shell opened too (`2>> in.jsonl`); beside stdout
  // (`> log 2>&1`) it is not an output of its own.
  return check_no_output_is_an_input({{"stderr", "/dev/stderr"}}, batch_inputs(flags));
}

/// -j, or as many connections as the open-file limit lets this process keep (saying so): past it
/// every connection would fail at once, as if the server were down.
std::size_t concurrency_within_open_files(std::size_t asked, const Context& context) {
  const OpenFiles files = raise_open_file_limit(asked);
  if (files.connections >= asked) return asked;
  context.err << "clef: warning: -j " << asked << " needs about " << asked + 256
              << " open files and this process may open " << files.limit
              << " (ulimit -Hn): running with -j " << files.connections << "\n";
  return files.connections;
}

/// --shard reads a regular file named on the command line: every shard reads the whole input,
/// and clef merge reads it again (hashing a stream for the run record would take its lines).
Status check_shardable(const BatchFlags& flags, const std::optional<Shard>& shard,
                       const InputFile& input) {
  if (!shard) return {};
  if (flags.input == "-") {
    return make_error(ErrorKind::invalid_input,
                      "--shard reads a file named on the command line, not stdin: every shard "
                      "reads the whole input, and clef merge reads it again",
                      "--shard");
  }
  if (!input.is_regular()) {
    return make_error(ErrorKind::invalid_input,
                      "--shard reads a regular file, and " + flags.input +
                          " is a pipe, FIFO or device: every shard reads the whole input, and "
                          "clef merge reads it again; save it to a file first",
                      "--shard");
  }
  return {};
}

}  // namespace

BatchEnd run_batch_engine(const BatchFlags& flags, const CLI::App& command,
                          const std::vector<Question>& questions, InputFormat format,
                          const Context& context, ResultObserver* observer) {
  auto refuse = [&](const Error& error) {
    return BatchEnd{report(context, error, flags.connection)};
  };
  if (auto status = check_files(flags, command, format); !status) return refuse(status.error());
  auto shard = resolve_shard(flags.shard, flags.shards);
  if (!shard) return refuse(shard.error());
  auto input = InputFile::open(flags.input, "the input", context.in, context.stop);
  if (!input) return refuse(input.error());
  if (auto status = check_shardable(flags, shard.value(), input.value()); !status)
    return refuse(status.error());
  auto prototype = build_request(State::text(""), questions, {}, flags.keep_alive);
  if (!prototype) return refuse(prototype.error());
  auto policy = load_policy(flags.policy, questions, flags.connection.model, context);
  if (!policy) return refuse(policy.error());
  const std::size_t concurrency = concurrency_within_open_files(flags.concurrency, context);
  auto clients = make_clients(flags.connection, context);
  if (!clients) return refuse(clients.error());
  auto record = describe_run(flags, format, clients.value(), prototype.value(), shard.value());
  if (!record) return refuse(record.error());
  auto reader = open_reader(flags, format, input.value());
  if (!reader) return refuse(reader.error());

  std::unordered_set<std::string> done;
  std::optional<OutputFile> output;
  if (auto refused = open_output(flags, record.value(), context, observer, done, output))
    return *refused;
  std::optional<ResultTable> table;
  if (flags.output_format != "jsonl") {
    std::vector<std::string> columns = reader.value()->header();
    if (columns.empty()) columns = {"id"};
    table.emplace(output_format_named(flags.output_format).value_or(OutputFormat::csv),
                  std::move(columns), questions);
    if (!output || !output->write_line(table->header())) {
      print_error(context, "cannot write the header row to " + flags.output);
      return {as_int(ExitCode::output)};
    }
  }
  // A shard's share of the lines is not known before they are read: no total.
  Progress progress(
      context.err, context.stderr_is_tty,
      shard.value() || !input->is_regular() ? std::nullopt : input_items(flags, format),
      done.size());
  BatchJob job(flags, context, *reader.value(), output ? &*output : nullptr, progress, done,
               prototype.value(), table ? &*table : nullptr,
               policy->has_value() ? &**policy : nullptr, observer, shard.value());
  BatchEnd end = job.finish(run_job(clients.value(), flags, concurrency, job, progress));
  if (auto failure = input->failure(); failure && end.completed) {
    // The input broke off (an I/O error, a line that never ends): what was read is written,
    // but it is not the whole input.
    print_error(context, failure->message + " (" + failure->where + ")",
                "the items read before it were written; --resume goes on from there");
    end = {as_int(ExitCode::usage), false};
  }
  const int cassette = cassette_failure_exit(clients->front(), context);
  if (cassette != 0) end = {cassette, false};
  return end;
}

}  // namespace clef::cli

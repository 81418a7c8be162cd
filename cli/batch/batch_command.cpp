// The implementation of batch_command.hpp: `clef batch`.
#include "batch/batch_command.hpp"

#include <stdlib.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <unordered_map>
#include <unordered_set>

#include "batch/batch_checks.hpp"
#include "batch/batch_input.hpp"
#include "batch/batch_job.hpp"
#include "batch/batch_output.hpp"
#include "batch/batch_progress.hpp"
#include "batch/batch_shard.hpp"
#include "batch/batch_table.hpp"
#include "batch/estimate_command.hpp"
#include "batch/item_images.hpp"
#include "batch/redis_rate.hpp"
#include "clef/async_transport.hpp"
#include "clef/batch.hpp"
#include "clef/decision_json.hpp"
#include "clef/digest.hpp"
#include "clef/json.hpp"
#include "commands/cassette_run.hpp"
#include "common/exit_codes.hpp"
#include "common/file_roles.hpp"
#include "common/files.hpp"
#include "common/input_file.hpp"
#include "common/output_target.hpp"
#include "common/terminal_text.hpp"
#include "flags/hosts.hpp"
#include "flags/policy_flag.hpp"
#include "flags/request_builder.hpp"
#include "output/error_report.hpp"

namespace clef::cli {
namespace {

using Json = nlohmann::ordered_json;

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
                               const std::optional<Shard>& shard, const Context& context) {
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
  // Only a file has a run record; stdout's run asks nothing more of the server.
  if (!flags.output.empty() && flags.output != "-")
    record.model_version = served_model_version(flags.connection, clients, context);
  return record;
}

}  // namespace

namespace {

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

/// --rate, or this shard's part of --rate-total: R/N, its first start K/R seconds in, so that
/// N shards started together send at R evenly instead of in N bursts.
/// With --rate-store the shards share R through Redis instead, R/N each only while it is away.
void set_rate(BatchOptions& options, const BatchFlags& flags, const std::optional<Shard>& shard,
              BatchJob& job) {
  options.max_requests_per_second = flags.rate;
  if (flags.rate_total <= 0 || !shard) return;
  const double share = flags.rate_total / static_cast<double>(shard->count);
  if (auto store = parse_rate_store(flags.rate_store); store && !flags.rate_store.empty()) {
    options.shared_rate =
        std::make_shared<RedisRate>(std::move(store).value(), flags.rate_total, share,
                                    [&job](const std::string& line) { job.warn(line); });
    return;
  }
  options.max_requests_per_second = share;
  options.first_start_offset = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(static_cast<double>(shard->index) / flags.rate_total));
}

/// Whether the run may turn its event loop on this thread (BatchOptions::drive_loop): the input
/// is a file, so reading never waits, and so is the output (-o FILE), so a write never waits for
/// a reader while transfers are in flight, unturned.
bool runs_on_one_thread(const BatchFlags& flags, const InputFile& input) {
  if (!input.is_regular()) return false;
  if (flags.output.empty()) return true;  // no output file: results stay in memory (eval)
  if (flags.output == "-" || descriptor_named(flags.output)) return false;
  return output_path(flags.output).kind != PathKind::stream;  // missing: made a file
}

BatchSummary run_job(const std::vector<Client>& clients, const BatchFlags& flags,
                     const std::optional<Shard>& shard, std::size_t concurrency, BatchJob& job,
                     InputFile& input, std::shared_ptr<DrivenCurlLoop> driven) {
  BatchOptions options;
  options.concurrency = concurrency;
  options.max_cost_usd = job.cost_cap();
  options.already_spent = job.spent_before();
  options.per_host = flags.per_host;
  options.max_ejected_share = flags.max_ejected / 100.0;
  options.state_affinity = flags.state_affinity;
  set_rate(options, flags, shard, job);
  options.throttle_budget =
      std::chrono::milliseconds(static_cast<long long>(flags.throttle_budget_seconds * 1000));
  options.ordered = flags.ordered;
  options.dedupe = flags.dedupe;
  options.should_stop = [&] { return job.should_stop(); };
  options.stop_when_unreachable = true;  // a batch against no server stops instead of failing all
  options.on_duplicate = [&](std::size_t index, std::size_t first) { job.duplicate(index, first); };
  options.after_delivery = [&] { job.write_group(); };
  options.on_pause = [&](std::chrono::system_clock::time_point until, const Error& why) {
    job.paused(until, why);
  };
  options.on_refusal = [&](const std::string& host) { job.refused(host); };
  // A run that ends early (the cost cap, a spent quota, no server) while a pipe's writer is
  // slow ends now, not when the next line comes.
  options.interrupt_source = [&] { input.interrupt(); };
  // A regular file's next line is there: read on this thread, no reader thread to hand it over.
  options.source_never_waits = input.is_regular();
  options.drive_loop = std::move(driven);  // and the loop's work too: one thread in all
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
  if (flags.estimate) return run_estimate(flags, questions.value(), format.value(), context);
  if (command.count("--sample") > 0) {
    return report(
        context,
        make_error(ErrorKind::invalid_input,
                   "--sample is the size of --estimate's sample: give --estimate too", "--sample"),
        flags.connection);
  }
  return run_batch_engine(flags, command, questions.value(), format.value(), context, nullptr)
      .exit_code;
}

namespace {

/// OUTPUT opened (none when flags.output is empty), with the header row of a table format.
/// `kept`: what the lines --resume keeps cost, for --max-cost (`client` prices a line whose cost
/// is unknown).
std::optional<BatchEnd> open_output(const BatchFlags& flags, const RunRecord& record,
                                    const std::vector<Question>& questions, const Context& context,
                                    ResultObserver* observer, std::unordered_set<std::string>& done,
                                    std::optional<OutputFile>& output, const ClientOptions& client,
                                    KeptCost& kept) {
  if (flags.output.empty()) return std::nullopt;
  OutputOptions options{flags.resume, flags.overwrite,      flags.force_resume,
                        {},           context.stop,         {},
                        {},           flags.after_other_run};
  for (const Question& question : questions)
    options.asked.emplace_back(question.name, to_string(question.type));
  options.on_kept = [observer, &kept, &client](const Json& line) {
    kept.add(line, client);
    if (observer) observer->kept(line);
  };
  options.on_model_change = [&context, &record, &flags](const std::string& was) {
    context.err << "clef: warning: " << terminal_safe_line(flags.output)
                << "'s earlier lines were answered by " << terminal_safe_line(was)
                << "; from here on " << terminal_safe_line(record.model_version)
                << " answers (the run record names both; clef diff compares two runs)\n";
  };
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

std::optional<std::size_t> input_items(const BatchFlags& flags, InputFormat format) {
  std::optional<std::size_t> total = count_lines(flags.input);
  const bool header = format == InputFormat::csv || format == InputFormat::tsv;
  if (total && header && *total > 0) --*total;
  return total;
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

/// With --output-format csv|tsv: the table, its header row written first.
std::optional<BatchEnd> open_table(const BatchFlags& flags, const InputReader& reader,
                                   const std::vector<Question>& questions,
                                   std::optional<OutputFile>& output,
                                   std::optional<ResultTable>& table, const Context& context) {
  if (flags.output_format == "jsonl") return std::nullopt;
  std::vector<std::string> columns = reader.header();
  if (columns.empty()) columns = {"id"};
  table.emplace(output_format_named(flags.output_format).value_or(OutputFormat::csv),
                std::move(columns), questions);
  if (!output || !output->write_line(table->header())) {
    print_error(context, "cannot write the header row to " + flags.output);
    return BatchEnd{as_int(ExitCode::output)};
  }
  return std::nullopt;
}

/// Each host's base URL as the metrics label it (credentials removed).
std::vector<std::string> host_names(const std::vector<Client>& clients) {
  std::vector<std::string> names;
  for (const Client& client : clients)
    names.push_back(url_without_credentials(client.options().base_url));
  return names;
}

/// --metrics-file, --metrics-push: `metrics` counts what `progress` does, exported from now on.
void export_metrics(const BatchFlags& flags, RunMetrics& metrics, Progress& progress, BatchJob& job,
                    std::optional<MetricsExport>& exporter) {
  if (flags.metrics.file.empty() && flags.metrics.push_url.empty()) return;
  progress.report_to(&metrics);
  MetricsTargets targets = flags.metrics;
  targets.ca_file = flags.connection.ca_cert;
  targets.shard = metrics.shard();  // the push's group is the series' shard label
  exporter.emplace(metrics, std::move(targets),
                   [&job](const std::string& line) { job.warn(line); });
}

}  // namespace

BatchEnd run_batch_engine(const BatchFlags& flags, const CLI::App& command,
                          const std::vector<Question>& questions, InputFormat format,
                          const Context& context, ResultObserver* observer) {
  auto refuse = [&](const Error& error) {
    return BatchEnd{report(context, error, flags.connection)};
  };
  if (auto status = check_files(flags, command, format); !status) return refuse(status.error());
  auto shard = shard_of_run(flags);
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
  const auto driven = runs_on_one_thread(flags, input.value()) ? make_driven_curl_loop() : nullptr;
  auto clients = make_clients(flags.connection, context, driven);
  if (!clients) return refuse(clients.error());
  auto record =
      describe_run(flags, format, clients.value(), prototype.value(), shard.value(), context);
  if (!record) return refuse(record.error());
  auto reader = open_reader(flags, format, input.value());
  if (!reader) return refuse(reader.error());
  std::unordered_set<std::string> done;
  std::optional<OutputFile> output;
  KeptCost kept;
  if (auto refused = open_output(flags, record.value(), questions, context, observer, done, output,
                                 clients->front().options(), kept))
    return *refused;
  std::optional<ResultTable> table;
  if (auto refused = open_table(flags, *reader.value(), questions, output, table, context))
    return *refused;
  // A shard's share of the lines is not known before they are read: no total.
  Progress progress(
      context.err, context.stderr_is_tty,
      shard.value() || !input->is_regular() ? std::nullopt : input_items(flags, format),
      done.size(), clients->front().options().model);
  BatchJob job(flags, context, *reader.value(), output ? &*output : nullptr, progress, done,
               prototype.value(), table ? &*table : nullptr,
               policy->has_value() ? &**policy : nullptr, observer, shard.value());
  if (auto refused = job.cap_cost(flags.max_cost, kept)) return *refused;
  RunMetrics metrics(host_names(clients.value()), done.size(),
                     shard.value() ? std::to_string(shard.value()->index) : "");
  std::optional<MetricsExport> exporter;
  export_metrics(flags, metrics, progress, job, exporter);
  const BatchSummary summary =
      run_job(clients.value(), flags, shard.value(), concurrency, job, input.value(), driven);
  BatchEnd end = job.finish(summary, !input->failure());
  if (exporter) exporter->finish();
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

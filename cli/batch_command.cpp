#include "batch_command.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <thread>
#include <unordered_map>

#include "batch_io.hpp"
#include "batch_progress.hpp"
#include "clef/batch.hpp"
#include "exit_codes.hpp"
#include "render.hpp"
#include "request_builder.hpp"

namespace clef::cli {
namespace {

using Json = nlohmann::ordered_json;

bool unreachable(const Error& error) {
  return error.kind == ErrorKind::connection_failed || error.kind == ErrorKind::tls;
}

}  // namespace

CLI::App* add_batch_command(CLI::App& app, BatchFlags& flags) {
  CLI::App* batch =
      app.add_subcommand("batch", "Decide every state in a JSONL, CSV/TSV or text file");
  batch->add_option("INPUT", flags.input, "Input file ('-' = stdin)")->required();
  batch->add_option("-o,--output", flags.output, "Output JSONL file ('-' = stdout)")
      ->capture_default_str();
  batch->add_option("--input-format", flags.input_format,
                    "jsonl | csv | tsv | text (default: from the name)");
  batch->add_option("--id-field", flags.id_field, "Field or column holding the id")
      ->capture_default_str();
  batch->add_option("--state-field", flags.state_field, "Field or column holding the state")
      ->capture_default_str();
  add_question_flags(*batch, flags.questions);
  batch->add_option("-j,--concurrency", flags.concurrency, "Requests in flight")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  batch->add_option("--rate", flags.rate, "At most this many requests per second (0 = no cap)")
      ->check(CLI::NonNegativeNumber);
  batch->add_flag("--ordered", flags.ordered, "Write results in input order");
  batch->add_flag("--resume", flags.resume,
                  "Keep OUTPUT's results and decide only the ids it lacks");
  batch->add_flag("--overwrite", flags.overwrite, "Replace an existing OUTPUT");
  batch->add_flag("--dedupe", flags.dedupe, "Send identical states once");
  batch->add_option("--keep-alive", flags.keep_alive,
                    "Ollama: keep the model loaded (seconds or 5m)");
  add_connection_flags(*batch, flags.connection);
  return batch;
}

int run_batch_command(const BatchFlags& flags, const CLI::App& command, const Context& context) {
  auto questions = collect_questions(flags.questions, command);
  if (!questions) return report(context, questions.error(), flags.connection);
  auto format = flags.input_format.empty() ? Result<InputFormat>(guess_input_format(flags.input))
                                           : parse_input_format(flags.input_format);
  if (!format) return report(context, format.error(), flags.connection);
  auto prototype = build_request(State::text(""), questions.value(), {}, flags.keep_alive);
  if (!prototype) return report(context, prototype.error(), flags.connection);

  std::ifstream file;
  if (flags.input != "-") {
    file.open(flags.input, std::ios::binary);
    if (!file)
      return report(context,
                    make_error(ErrorKind::invalid_input, "cannot open the input", flags.input),
                    flags.connection);
  }
  std::istream& in = flags.input == "-" ? context.in : file;
  auto reader = make_reader(in, format.value(), {flags.id_field, flags.state_field});
  if (!reader) {
    Error error = reader.error();
    error.where = flags.input + ": " + error.where;
    return report(context, error, flags.connection);
  }
  std::set<std::string> done;
  auto output = OutputFile::open(flags.output, flags.resume, flags.overwrite, done, context.out);
  if (!output) return report(context, output.error(), flags.connection);
  auto client = make_client(flags.connection, context, false);
  if (!client) return report(context, client.error(), flags.connection);

  std::optional<std::size_t> total = count_lines(flags.input);
  if (total && format.value() != InputFormat::jsonl && format.value() != InputFormat::text &&
      *total > 0)
    --*total;
  Progress progress(context.err, context.stderr_is_tty, total, done.size());

  // Pending ids by input index: only the items in flight are held.
  std::unordered_map<std::size_t, Json> ids;
  std::size_t next_index = 0;
  std::size_t consecutive_unreachable = 0;
  bool any_success = false;
  bool write_failed = false;
  std::atomic<bool> halt{false};
  std::optional<Error> fatal;

  RequestSource source = [&]() -> std::optional<Result<DecisionRequest>> {
    for (;;) {
      auto item = reader.value()->next();
      if (!item) return std::nullopt;
      if (done.count(id_key(item->id))) {
        progress.skipped();
        continue;
      }
      ids.emplace(next_index++, item->id);
      if (!item->state) return Result<DecisionRequest>(item->state.error());
      DecisionRequest request = prototype.value();
      request.state = std::move(item->state).value();
      return Result<DecisionRequest>(std::move(request));
    }
  };
  ResultSink sink = [&](std::size_t index, Result<Decision>&& result) {
    Json id = std::move(ids[index]);
    ids.erase(index);
    if (!result && result.error().kind == ErrorKind::cancelled) {
      progress.not_done();  // left out of OUTPUT: --resume decides it
      return;
    }
    Json line = Json::object();
    line["id"] = id;
    bool ok = result.ok();
    if (result) {
      Json decision = decision_json(result.value());
      for (auto& item : decision.items()) line[item.key()] = std::move(item.value());
      ok = result->all_ok();
      any_success = true;
      consecutive_unreachable = 0;
    } else {
      line["error"] = error_json(result.error());
      if (unreachable(result.error()) && !any_success &&
          ++consecutive_unreachable >= 2 * flags.concurrency) {
        fatal =
            result.error();  // the server is not there at all: stop instead of failing every item
        halt = true;
      }
    }
    if (!output->write_line(dump(line))) {
      write_failed = true;
      halt = true;
    }
    progress.finished(ok, result ? &result.value() : nullptr);
  };

  std::atomic<bool> stop{false};
  BatchOptions options;
  options.concurrency = flags.concurrency;
  options.max_requests_per_second = flags.rate;
  options.ordered = flags.ordered;
  options.dedupe = flags.dedupe;
  options.stop = &stop;
  // The engine polls one flag: raise it for a signal or for our own reasons.
  std::thread watcher([&] {
    while (!stop) {
      if ((context.stop && context.stop->load()) || halt) stop = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  const BatchSummary summary = run_batch(client.value(), source, sink, options);
  const bool interrupted = context.stop && context.stop->load();
  stop = true;
  watcher.join();
  progress.finish(summary);

  if (write_failed) {
    print_error(context,
                "cannot write to " + flags.output + "; the results written so far are intact",
                "free space or fix the path, then run again with --resume");
    return as_int(ExitCode::usage);
  }
  if (fatal) return report(context, *fatal, flags.connection);
  if (interrupted) {
    context.err << "clef: interrupted; run again with --resume to finish the rest\n";
    return as_int(ExitCode::interrupted);
  }
  return as_int(progress.failures() > 0 ? ExitCode::partial_failure : ExitCode::ok);
}

}  // namespace clef::cli

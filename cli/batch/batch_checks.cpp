// The implementation of batch_checks.hpp: what `clef batch` refuses before it opens anything.
#include "batch/batch_checks.hpp"

#include "batch/batch_output.hpp"
#include "batch/batch_shard.hpp"
#include "batch/redis_rate.hpp"
#include "commands/cassette_run.hpp"
#include "common/file_roles.hpp"
#include "common/files.hpp"

namespace clef::cli {
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
  if (format == InputFormat::text) {
    // A text line is its state and its line number its id: a field named for either would be
    // read nowhere, silently.
    for (const char* flag : {"--image-field", "--id-field", "--state-field"}) {
      if (command.count(flag) == 0) continue;
      return make_error(ErrorKind::invalid_input,
                        std::string(flag) +
                            " names a field of JSONL or a column of CSV/TSV, and text lines have "
                            "neither (a text line is the state, its line number the id)",
                        flag);
    }
  }
  if (flags.output_format != "jsonl" && (flags.resume || flags.dedupe)) {
    return make_error(ErrorKind::invalid_input,
                      std::string(flags.resume ? "--resume" : "--dedupe") +
                          " reads OUTPUT back, which needs --output-format jsonl",
                      "--output-format");
  }
  return {};
}

/// What a batch writes: OUTPUT (stdout by default) and a --record cassette.
std::vector<NamedFile> batch_outputs(const BatchFlags& flags) {
  const bool file = !flags.output.empty() && flags.output != "-";
  return {{"the output", flags.output},
          {"the run record", file ? run_record_path(flags.output) : std::string()},
          {"--record", flags.connection.record},
          {"--metrics-file", flags.metrics.file}};
}

/// What a batch reads before and while it runs (the items' images excepted).
std::vector<NamedFile> batch_inputs(const BatchFlags& flags) {
  std::vector<NamedFile> inputs = connection_inputs(flags.connection);
  inputs.push_back({"the input", flags.input});
  inputs.push_back({"--policy", flags.policy});
  for (const auto& file : flags.questions.files) inputs.push_back({"--questions", file});
  return inputs;
}

/// --rate-total is shared among shards: it needs --shard, and is not --rate too.
Status check_rate_total(const BatchFlags& flags, const std::optional<Shard>& shard) {
  if (flags.rate_total <= 0) return {};
  if (flags.rate > 0) {
    return make_error(ErrorKind::invalid_input,
                      "give --rate (this run's requests per second) or --rate-total (all "
                      "shards' together), not both",
                      "--rate-total");
  }
  if (!shard) {
    return make_error(ErrorKind::invalid_input,
                      "--rate-total shares one rate among the shards of a run: give --shard K/N "
                      "(or auto), or --rate for a run that is not split",
                      "--rate-total");
  }
  return {};
}

/// --rate-store keeps --rate-total's budget: a Redis URL, with --rate-total.
Status check_rate_store(const BatchFlags& flags) {
  if (flags.rate_store.empty()) return {};
  if (flags.rate_total <= 0) {
    return make_error(ErrorKind::invalid_input,
                      "--rate-store keeps the budget of --rate-total R: give --rate-total too",
                      "--rate-store");
  }
  auto address = parse_rate_store(flags.rate_store);
  if (!address) return address.error();
  return {};
}

}  // namespace

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

Status check_files(const BatchFlags& flags, const CLI::App& command, InputFormat format) {
  if (auto status = check_record_path(flags.connection,
                                      {{"the input", flags.input}, {"the output", flags.output}});
      !status) {
    return status;
  }
  if (auto status = check_format_flags(flags, command, format); !status) return status;
  if (auto status = check_metrics_targets(flags.metrics); !status) return status;
  if (auto status = check_no_output_is_an_input(batch_outputs(flags), batch_inputs(flags));
      !status) {
    return status;
  }
  // stderr (progress, -v) may be a file the shell opened too (`2>> in.jsonl`); beside stdout
  // (`> log 2>&1`) it is not an output of its own.
  if (auto status = check_no_output_is_an_input({{"stderr", "/dev/stderr"}}, batch_inputs(flags));
      !status) {
    return status;
  }
  // Nor may it be a file the run writes (`-v 2>> out.jsonl`): clef's messages among its results,
  // its cassette's lines or its metrics.
  for (const NamedFile& written : batch_outputs(flags)) {
    if (written.path.empty() || written.path == "-" ||
        check_no_output_is_an_input({{"stderr", "/dev/stderr"}}, {written}))
      continue;
    return make_error(ErrorKind::invalid_input,
                      "stderr is " + written.role + " (" + written.path +
                          "): clef's messages would go among what it writes there; send stderr "
                          "elsewhere",
                      written.path);
  }
  return {};
}

Result<std::optional<Shard>> shard_of_run(const BatchFlags& flags) {
  auto shard = resolve_shard(flags.shard, flags.shards);
  if (!shard) return shard.error();
  if (auto status = check_rate_total(flags, shard.value()); !status) return status.error();
  if (auto status = check_rate_store(flags); !status) return status.error();
  return shard;
}

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

}  // namespace clef::cli

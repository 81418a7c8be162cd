// The implementation of merge_command.hpp: `clef merge`.
#include "batch/merge_command.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "batch/batch_input.hpp"
#include "batch/batch_output.hpp"
#include "batch/batch_shard.hpp"
#include "batch/cost_tally.hpp"
#include "batch/shard_lines.hpp"
#include "clef/batch.hpp"
#include "clef/json.hpp"
#include "common/exit_codes.hpp"
#include "common/file_roles.hpp"
#include "common/files.hpp"
#include "common/input_file.hpp"
#include "common/output_target.hpp"
#include "common/replacement_file.hpp"
#include "common/terminal_text.hpp"
#include "output/error_report.hpp"

namespace clef::cli {
namespace {

using Json = nlohmann::ordered_json;

Error merge_error(const std::string& message, const std::string& where) {
  return make_error(ErrorKind::invalid_input, message, where);
}

/// One shard's output file and what its run record says of it.
struct ShardRun {
  std::string path;
  Shard shard;
  std::map<std::string, std::string> record;

  /// A field of the run record, or `fallback` when the record has none.
  std::string field(const std::string& name, const std::string& fallback = "") const {
    const auto it = record.find(name);
    return it == record.end() ? fallback : it->second;
  }
};

/// What must be the same in every shard's run: what was asked, of which model, about which
/// input bytes, read how, written how. (The server may differ: each shard may use its own.)
constexpr const char* same_in_every_shard[] = {"backend",        "model",        "questions_sha256",
                                               "request_sha256", "input_sha256", "input_format",
                                               "id_field",       "state_field",  "output_format"};

Result<ShardRun> read_shard_run(const std::string& path, std::istream& in) {
  if (path_kind(path) == PathKind::directory) {
    return merge_error("cannot read the shard's output: " + system_reason(EISDIR), path);
  }
  const std::string record_path = run_record_path(path);
  auto text = read_file(record_path, "the run record", in);
  if (!text) {
    return merge_error("the shard output has no readable run record (" + record_path +
                           "), which clef batch writes beside every output: merge needs it to "
                           "check the shards belong together",
                       path);
  }
  auto json = parse_json(text.value(), "the run record");
  if (!json || !json->is_object())
    return merge_error("the run record is not a JSON object", record_path);
  ShardRun run{path, {}, {}};
  for (const auto& [name, value] : json->items()) {
    if (value.is_string()) run.record[name] = value.get<std::string>();
  }
  const auto shard = run.record.find("shard");
  if (shard == run.record.end()) {
    if (json->contains("shard"))  // a record edited by hand, or of another tool
      return merge_error("the run record's \"shard\" is not text such as \"1/4\"", record_path);
    return merge_error("the file is not a shard's output (its run had no --shard)", path);
  }
  auto parsed = parse_shard(shard->second, record_path);
  if (!parsed) return parsed.error();
  run.shard = parsed.value();
  const std::string format = run.field("output_format", "jsonl");
  if (format != "jsonl") {
    return merge_error("the shard output was written as " + format +
                           " (--output-format): merge joins JSONL outputs, which --resume can "
                           "also read back; run the shards with the default --output-format jsonl",
                       path);
  }
  return run;
}

/// The shards are of one run split N ways, each given once.
Status check_one_run(const std::vector<ShardRun>& runs) {
  const ShardRun& first = runs.front();
  std::map<std::size_t, std::string> seen;
  for (const auto& run : runs) {
    for (const char* field : same_in_every_shard) {
      const auto a = first.record.find(field), b = run.record.find(field);
      const std::string was = a == first.record.end() ? "" : a->second;
      const std::string now = b == run.record.end() ? "" : b->second;
      if (was != now) {
        return merge_error(std::string("the shard output is not of the same run as ") + first.path +
                               ": its " + field + " is \"" + now + "\", not \"" + was + "\"",
                           run.path);
      }
    }
    if (run.shard.count != first.shard.count) {
      return merge_error("the shard output is shard " + run.shard.text() + " of a run split " +
                             std::to_string(run.shard.count) + " ways, but " + first.path +
                             " is shard " + first.shard.text() + " of one split " +
                             std::to_string(first.shard.count) + " ways",
                         run.path);
    }
    const auto [it, fresh] = seen.emplace(run.shard.index, run.path);
    if (!fresh && it->second == run.path) {
      return merge_error("the shard output is given twice (shard " + run.shard.text() + ")",
                         run.path);
    }
    if (!fresh) {
      return merge_error("the shard output is shard " + run.shard.text() + ", the same shard as " +
                             it->second + ": give each shard once",
                         run.path);
    }
  }
  return {};
}

/// The merged result lines in input order, as places in the shards, and the items that have
/// none.
struct Merged {
  std::vector<LineAt> lines;
  std::vector<std::string> missing;  ///< The first ten id keys (or "line N").
  std::size_t missing_count = 0;
  std::set<std::size_t> shards_to_rerun;
  std::size_t failed = 0;
};

/// Reads INPUT once (a file or a stream), in its order, taking each item's line out of the
/// index; checks its SHA-256 against the shards' once it is read.
Result<Merged> in_input_order(const std::string& input, const ShardRun& first, ShardIndex& index,
                              const Context& context) {
  auto format = parse_input_format(first.field("input_format"));
  if (!format) return format.error();
  InputFields fields;
  fields.id = first.field("id_field", "id");
  // Only ids are read: the id column doubles as the state, whatever the state columns were.
  if (format.value() == InputFormat::csv || format.value() == InputFormat::tsv)
    fields.state_columns = {fields.id};
  auto file = InputFile::open(input, "the input", context.in, context.stop);
  if (!file) {
    // The path the shards' run records name: the input may have moved since.
    Error error = file.error();
    error.message += ": give the input the shards read with --input";
    return error;
  }
  auto reader = make_reader(file->stream(), format.value(), fields);
  if (!reader) return reader.error();
  Merged merged;
  const std::size_t count = first.shard.count;
  while (auto item = reader.value()->next()) {
    const std::string name =
        item->id.is_null() ? "line " + std::to_string(item->line) : id_key(item->id);
    std::optional<LineAt> line =
        item->id.is_null() ? index.take_line(item->line) : index.take_id(name);
    if (!line) {
      if (merged.missing.size() < 10) merged.missing.push_back(name);
      ++merged.missing_count;
      merged.shards_to_rerun.insert(item->id.is_null() ? 0 : shard_of(name, count));
      continue;
    }
    if (!line->kept) ++merged.failed;
    merged.lines.push_back(*line);
  }
  if (auto failure = file->failure()) return failure.value();
  const auto digest = file->sha256_of_what_was_read();
  const std::string expected = first.field("input_sha256");
  if (digest && !expected.empty() && digest.value() != expected) {
    return merge_error(
        "is not the input the shards read (its SHA-256 differs): give the "
        "same file with --input",
        input);
  }
  if (auto left = index.first_left()) {
    return merge_error("the shards have a result for " + *left +
                           ", which is not in the input (or not that many times)",
                       input);
  }
  return merged;
}

/// "; they cost $X in all" (and how many lines' cost is unknown): the shards' spend summed.
void print_spend(const ShardIndex& index, const Context& context) {
  if (index.spent_usd() == 0 && index.cost_unknown() == 0) return;  // free, or written before
  context.err << "; they cost " << dollars_in_message(index.spent_usd()) << " in all";
  if (index.cost_unknown() > 0)
    context.err << " (and " << index.cost_unknown() << " whose cost is unknown)";
}

/// The shards to run again, joined by `separator`.
std::string shard_list(const std::set<std::size_t>& shards, const char* separator) {
  std::string list;
  for (std::size_t k : shards) list += (list.empty() ? "" : separator) + std::to_string(k);
  return list;
}

/// Lines of the shards that are not result lines, said on every way out: when items are
/// missing, a torn line is often why.
void say_left_out(const ShardIndex& index, const Context& context) {
  if (index.left_out() == 0) return;
  context.err << "clef: merge: " << index.left_out()
              << " line(s) of the shards are not result lines (torn by a kill, or not clef's): "
                 "left out\n";
}

/// Says which items and shards are missing, and how to run them again; exit 10.
int report_missing(const Merged& merged, const std::vector<ShardRun>& runs, std::size_t count,
                   const Context& context) {
  std::set<std::size_t> rerun = merged.shards_to_rerun;
  std::set<std::size_t> given;
  for (const auto& run : runs) given.insert(run.shard.index);
  std::set<std::size_t> absent;
  for (std::size_t k = 0; k < count; ++k) {
    if (!given.count(k)) absent.insert(k), rerun.insert(k);
  }
  std::string list;
  for (std::size_t i = 0; i < merged.missing.size(); ++i)
    list += (i ? ", " : "") + merged.missing[i];
  if (merged.missing_count > merged.missing.size()) list += ", …";
  if (!absent.empty()) {
    context.err << "clef: merge: no output given for shard(s) " << shard_list(absent, ", ")
                << " of " << count << "\n";
  }
  context.err << "clef: merge: " << merged.missing_count << " item(s) have no result: " << list
              << "\n";
  const std::string n = std::to_string(count);
  context.err << "clef: merge: run shard(s) " << shard_list(rerun, ",")
              << " again with --resume (the same -o each wrote), then merge again:\n"
              << "  clef batch …: --shard K/" << n << " for each K above\n"
              << "  Slurm: sbatch --array=" << shard_list(rerun, ",")
              << " with --shard auto --shards " << n
              << " in the script (a rerun's task ids are shard numbers)\n"
              << "  Kubernetes Indexed Job: the indexes " << shard_list(rerun, ",")
              << " (--shard auto --shards " << n << ")\n"
              << "  GNU parallel: ::: " << shard_list(rerun, " ") << "\n";
  return as_int(ExitCode::incomplete);
}

/// The summary of a merge written whole: exit 0, or 6 when some of its items are failures.
int summarize(const Merged& merged, std::size_t shards, const ShardIndex& index,
              const Context& context) {
  say_left_out(index, context);
  context.err << "clef: merge: " << merged.lines.size() << " items from " << shards
              << " shards, every one once";
  print_spend(index, context);
  if (merged.failed == 0) {
    context.err << "\n";
    return as_int(ExitCode::ok);
  }
  context.err << "; " << merged.failed
              << " of them failed (their errors are in the output): run their shards again "
                 "with --resume, then merge\n";
  return as_int(ExitCode::partial_failure);
}

/// Nothing at `path`, not even a dangling link's target: a shard output never written.
bool never_written(const std::string& path) {
  return path_kind(path) == PathKind::missing && errno == ENOENT;  // path_kind's errno
}

/// The run record of each shard output given. A shard that never wrote its output (killed
/// before, never started, its job lost) is left out, said: its items are missing, which the
/// merge as a whole says (exit 10), not an error of usage.
Result<std::vector<ShardRun>> read_shard_runs(const MergeFlags& flags, const Context& context,
                                              bool& some_never_written) {
  std::vector<ShardRun> runs;
  some_never_written = false;
  for (const auto& path : flags.shards) {
    if (never_written(path)) {
      context.err << "clef: merge: \"" << terminal_safe_line(path)
                  << "\" does not exist: that shard wrote nothing\n";
      some_never_written = true;
      continue;
    }
    auto run = read_shard_run(path, context.in);
    if (!run) return run.error();
    runs.push_back(std::move(run).value());
  }
  return runs;
}

/// A path that is the process's own standard output, as a shell hands it over.
bool names_stdout(const std::string& path) {
  return path == "-" || path == "/dev/stdout" || path == "/dev/fd/1" || path == "/proc/self/fd/1";
}

/// Refused: OUT (stdout included, when it is a file) is one of the files merge reads — a
/// shard, its run record, the input — under any name; or a directory.
Status check_not_an_input(const std::string& output, const std::vector<ShardRun>& runs,
                          const std::string& input) {
  if (!names_stdout(output) && path_kind(output) == PathKind::directory)
    return merge_error("-o names a directory", output);
  std::vector<NamedFile> inputs{{"the input", input}};
  for (const auto& run : runs) {
    inputs.push_back({"a shard", run.path});
    inputs.push_back({"a run record", run_record_path(run.path)});
  }
  return check_no_output_is_an_input({{"-o", names_stdout(output) ? "-" : output}}, inputs);
}

/// Writes the merged lines to OUT the way clef batch writes its output: a regular file (or a
/// new one) whole or not at all through a replacement file, stdout as stdout, anything else (a
/// FIFO, a device) in place.
Status write_output(const MergeFlags& flags, const Merged& merged, const ShardIndex& index,
                    const Context& context) {
  if (names_stdout(flags.output)) {
    StreamWriter out(context.out);
    return copy_lines(merged.lines, index, out);
  }
  const OutputPath target = output_path(flags.output);
  if (descriptor_named(flags.output)) {  // /dev/fd/3: the shell's descriptor, as it opened it
    auto out = FdWriter::open(flags.output, context.stop);
    if (!out) return out.error();
    return copy_lines(merged.lines, index, out.value());
  }
  if (target.kind == PathKind::regular && target.size > 0 && !flags.overwrite) {
    return merge_error("the output file exists: --overwrite replaces it", flags.output);
  }
  if (target.kind != PathKind::regular && target.kind != PathKind::missing) {
    auto out = FdWriter::open(target.path, context.stop);
    if (!out) return out.error();
    return copy_lines(merged.lines, index, out.value());
  }
  auto replacement = ReplacementFile::create(target.path);
  if (!replacement) return replacement.error();
  FdWriter out(replacement->fd(), context.stop);
  if (auto copied = copy_lines(merged.lines, index, out); !copied) return copied;
  return replacement->commit();
}

}  // namespace

CLI::App* add_merge_command(CLI::App& app, MergeFlags& flags) {
  CLI::App* merge = app.add_subcommand(
      "merge",
      "Join the outputs of `clef batch --shard K/N` into one, in input order, every item once");
  merge->footer(
      "Examples:\n"
      "  clef merge routed.?.jsonl -o routed.jsonl\n"
      "  clef merge out/routed.*.jsonl -o routed.jsonl --input tickets.jsonl\n");
  merge
      ->add_option("SHARD_OUTPUT", flags.shards,
                   "The shards' output files (each with its run record)")
      ->required();
  merge->add_option("-o,--output", flags.output, "The merged JSONL ('-' = stdout)")->required();
  merge->add_option("--input", flags.input,
                    "The input the shards read (default: the path their run records name)");
  merge->add_flag("--overwrite", flags.overwrite, "Replace an existing OUTPUT");
  return merge;
}

int run_merge(const MergeFlags& flags, const Context& context) {
  auto fail = [&](const Error& error) {
    print_error(context, error.message + " (" + error.where + ")");
    return as_int(error.kind == ErrorKind::cancelled ? ExitCode::interrupted : ExitCode::usage);
  };
  bool some_never_written = false;
  auto read = read_shard_runs(flags, context, some_never_written);
  if (!read) return fail(read.error());
  const std::vector<ShardRun>& runs = read.value();
  if (runs.empty()) {
    print_error(context, "none of the shards' outputs exists: run the shards, then merge");
    return as_int(ExitCode::incomplete);
  }
  if (auto status = check_one_run(runs); !status) return fail(status.error());
  const ShardRun& first = runs.front();
  const std::string input = flags.input.empty() ? first.field("input") : flags.input;
  if (auto status = check_not_an_input(flags.output, runs, input); !status)
    return fail(status.error());
  ShardIndex index;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    auto status =
        index.add_shard(runs[i].path, static_cast<std::uint32_t>(i), runs[i].shard, context.stop);
    if (!status) return fail(status.error());
  }
  if (auto repeated = index.repeated_id()) {
    return fail(
        merge_error("the shards hold more than one line for the id " + *repeated +
                        " (the input repeats it, or a shard holds a line twice): merge puts "
                        "lines back in input order by their ids, and cannot tell these "
                        "apart; remove a copied line, or give each item its own id",
                    index.path_of(*repeated)));
  }
  auto merged = in_input_order(input, first, index, context);
  if (!merged) return fail(merged.error());
  if (merged->missing_count > 0 || runs.size() != first.shard.count) {
    say_left_out(index, context);
    return report_missing(merged.value(), runs, first.shard.count, context);
  }
  if (some_never_written) {
    // Every item is in the others, but a shard named on the command line wrote nothing: the
    // list is not the run's, and merge does not guess which is wrong.
    print_error(context,
                "a shard output given does not exist (said above), though every item is in the "
                "others: give the shards' outputs as they were written, then merge again");
    return as_int(ExitCode::incomplete);
  }
  if (auto status = write_output(flags, merged.value(), index, context); !status) {
    print_error(context, status.error().message + " (" + status.error().where + ")");
    const ErrorKind kind = status.error().kind;
    return as_int(kind == ErrorKind::invalid_input ? ExitCode::usage
                  : kind == ErrorKind::cancelled   ? ExitCode::interrupted
                                                   : ExitCode::output);
  }
  return summarize(merged.value(), runs.size(), index, context);
}

}  // namespace clef::cli

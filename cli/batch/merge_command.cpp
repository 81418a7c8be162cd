// The implementation of merge_command.hpp: `clef merge`.
#include "batch/merge_command.hpp"

#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>

#include "batch/batch_input.hpp"
#include "batch/batch_output.hpp"
#include "batch/batch_shard.hpp"
#include "clef/batch.hpp"
#include "clef/json.hpp"
#include "common/exit_codes.hpp"
#include "common/files.hpp"
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
/// input bytes, read how. (The server may differ: each shard may use its own.)
constexpr const char* same_in_every_shard[] = {"backend",        "model",        "questions_sha256",
                                               "request_sha256", "input_sha256", "input_format",
                                               "id_field",       "state_field"};

Result<ShardRun> read_shard_run(const std::string& path, std::istream& in) {
  const std::string record_path = run_record_path(path);
  auto text = read_file(record_path, "the run record", in);
  if (!text) {
    return merge_error("has no readable run record (" + record_path +
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
    return merge_error("is not a shard's output (its run had no --shard)", path);
  }
  auto parsed = parse_shard(shard->second, record_path);
  if (!parsed) return parsed.error();
  run.shard = parsed.value();
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
        return merge_error(std::string("is not of the same run as ") + first.path + ": its " +
                               field + " is \"" + now + "\", not \"" + was + "\"",
                           run.path);
      }
    }
    if (run.shard.count != first.shard.count) {
      return merge_error(
          "is shard " + run.shard.text() + " but " + first.path + " is shard " + first.shard.text(),
          run.path);
    }
    const auto [it, fresh] = seen.emplace(run.shard.index, run.path);
    if (!fresh) {
      return merge_error("is shard " + run.shard.text() + ", and so is " + it->second, run.path);
    }
  }
  return {};
}

/// A shard's line as written, and whether it holds a result (is_kept_result), read once.
struct ResultLine {
  std::string text;
  bool kept = false;
};

/// Every result line of the shards: by id key, and by line number for items without an id.
struct ShardLines {
  std::unordered_map<std::string, std::deque<ResultLine>> by_id;
  std::unordered_map<std::size_t, ResultLine> by_line;
  std::size_t torn = 0;  ///< Lines that are not whole JSON objects (a shard killed mid-write).
};

Status read_lines(const ShardRun& run, ShardLines& lines) {
  std::ifstream file(run.path, std::ios::binary);
  if (!file) return merge_error("cannot open the shard's output", run.path);
  Line read;
  for (std::size_t number = 1; read_line(file, read, max_input_line); ++number) {
    auto json = read.too_long ? Result<Json>(Json()) : parse_json(read.text, "the line");
    if (!json || !json->is_object()) {
      ++lines.torn;  // its item counts as missing: the shard is run again
      continue;
    }
    const auto id = json->find("id");
    if (id == json->end() || id->is_null()) {
      const auto line = json->find("line");
      if (line != json->end() && line->is_number_unsigned())
        lines.by_line[line->get<std::size_t>()] = {read.text, is_kept_result(json.value())};
      continue;
    }
    if (!in_shard(run.shard, *id)) {
      return merge_error("line " + std::to_string(number) + " has the id " + id_key(*id) +
                             ", which is shard " +
                             std::to_string(shard_of(id_key(*id), run.shard.count)) + "'s, not " +
                             run.shard.text() + "'s",
                         run.path);
    }
    lines.by_id[id_key(*id)].push_back({read.text, is_kept_result(json.value())});
  }
  return {};
}

/// The merged lines in input order, and the items that have none.
struct Merged {
  std::vector<std::string> lines;
  std::vector<std::string> missing;  ///< Id keys (or "line N").
  std::set<std::size_t> shards_to_rerun;
  std::size_t failed = 0;
};

Result<Merged> in_input_order(const std::string& input, const ShardRun& first, ShardLines& lines) {
  const std::string format_name = first.field("input_format");
  auto format = parse_input_format(format_name);
  if (!format) return format.error();
  InputFields fields;
  fields.id = first.field("id_field", "id");
  // Only ids are read: the id column doubles as the state, whatever the state columns were.
  if (format.value() == InputFormat::csv || format.value() == InputFormat::tsv)
    fields.state_columns = {fields.id};
  std::ifstream file(input, std::ios::binary);
  if (!file) return merge_error("cannot open the input", input);
  auto reader = make_reader(file, format.value(), fields);
  if (!reader) return reader.error();
  Merged merged;
  const std::size_t count = first.shard.count;
  while (auto item = reader.value()->next()) {
    std::optional<ResultLine> line;
    std::string name;
    if (item->id.is_null()) {
      name = "line " + std::to_string(item->line);
      auto found = lines.by_line.find(item->line);
      if (found != lines.by_line.end()) line = std::move(found->second), lines.by_line.erase(found);
    } else {
      name = id_key(item->id);
      auto found = lines.by_id.find(name);
      if (found != lines.by_id.end() && !found->second.empty()) {
        line = std::move(found->second.front());
        found->second.pop_front();
      }
    }
    if (!line) {
      merged.missing.push_back(name);
      merged.shards_to_rerun.insert(item->id.is_null() ? 0 : shard_of(name, count));
      continue;
    }
    if (!line->kept) ++merged.failed;
    merged.lines.push_back(std::move(line->text));
  }
  for (const auto& [key, left] : lines.by_id) {
    if (!left.empty()) {
      return merge_error("the shards have a result for " + key +
                             ", which is not in the input (or not that many times)",
                         input);
    }
  }
  return merged;
}

/// Says which items and shards are missing, and how to run them again; exit 10.
int report_missing(const Merged& merged, const std::vector<ShardRun>& runs, std::size_t count,
                   const Context& context) {
  std::set<std::size_t> given;
  for (const auto& run : runs) given.insert(run.shard.index);
  std::string absent, list;
  for (std::size_t k = 0; k < count; ++k) {
    if (!given.count(k)) absent += (absent.empty() ? "" : ", ") + std::to_string(k);
  }
  for (std::size_t i = 0; i < merged.missing.size() && i < 10; ++i)
    list += (i ? ", " : "") + merged.missing[i];
  if (merged.missing.size() > 10) list += ", …";
  std::string rerun;
  for (std::size_t k : merged.shards_to_rerun)
    rerun += (rerun.empty() ? "" : ",") + std::to_string(k);
  if (!absent.empty())
    context.err << "clef: merge: no output given for shard(s) " << absent << " of " << count
                << "\n";
  context.err << "clef: merge: " << merged.missing.size() << " item(s) have no result: " << list
              << "\n";
  context.err << "clef: merge: run shard(s) " << rerun << " again (with --resume), then merge: "
              << "Slurm: sbatch --array=" << rerun << " …; Kubernetes Indexed Job: indexes "
              << rerun << "; GNU parallel: ::: " <<
      [&] {
        std::string spaced = rerun;
        for (char& c : spaced) c = c == ',' ? ' ' : c;
        return spaced;
      }() << "\n";
  return as_int(ExitCode::incomplete);
}

/// Writes OUT whole or not at all (a temporary file renamed over it).
Status write_output(const MergeFlags& flags, const Merged& merged, const Context& context) {
  if (flags.output == "-") {
    for (const auto& line : merged.lines) context.out << line << "\n";
    return {};
  }
  std::ifstream existing(flags.output);
  if (existing.good() && existing.peek() != std::ifstream::traits_type::eof() && !flags.overwrite) {
    return merge_error("exists: give --overwrite to replace it", flags.output);
  }
  const std::string temp = flags.output + ".clef-merge";
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  for (const auto& line : merged.lines) out << line << '\n';
  out.close();
  if (!out || std::rename(temp.c_str(), flags.output.c_str()) != 0) {
    std::remove(temp.c_str());
    return make_error(ErrorKind::connection_failed, "cannot write the merged output", flags.output);
  }
  return {};
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
    return as_int(ExitCode::usage);
  };
  std::vector<ShardRun> runs;
  for (const auto& path : flags.shards) {
    auto run = read_shard_run(path, context.in);
    if (!run) return fail(run.error());
    runs.push_back(std::move(run).value());
  }
  if (auto status = check_one_run(runs); !status) return fail(status.error());
  const ShardRun& first = runs.front();
  const std::string input = flags.input.empty() ? first.field("input") : flags.input;
  auto digest = file_sha256(input, "the input");
  if (!digest) return fail(digest.error());
  if (digest.value() != first.field("input_sha256", digest.value())) {
    return fail(
        merge_error("is not the input the shards read (its SHA-256 differs): give the "
                    "same file with --input",
                    input));
  }
  ShardLines lines;
  for (const auto& run : runs) {
    if (auto status = read_lines(run, lines); !status) return fail(status.error());
  }
  auto merged = in_input_order(input, first, lines);
  if (!merged) return fail(merged.error());
  if (!merged->missing.empty() || runs.size() != first.shard.count)
    return report_missing(merged.value(), runs, first.shard.count, context);
  if (auto status = write_output(flags, merged.value(), context); !status) {
    print_error(context, status.error().message + " (" + status.error().where + ")");
    return as_int(status.error().kind == ErrorKind::invalid_input ? ExitCode::usage
                                                                  : ExitCode::output);
  }
  context.err << "clef: merge: " << merged->lines.size() << " items from " << runs.size()
              << " shards, every one once";
  if (merged->failed == 0) {
    context.err << "\n";
    return as_int(ExitCode::ok);
  }
  context.err << "; " << merged->failed
              << " of them failed (their errors are in the output): run their shards again "
                 "with --resume, then merge\n";
  return as_int(ExitCode::partial_failure);
}

}  // namespace clef::cli

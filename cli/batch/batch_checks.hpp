// What `clef batch` refuses before it opens anything: flags that contradict each other, files
// that would overwrite one another, a shard plan or a rate the run cannot keep.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>

#include "batch/batch_command.hpp"
#include "batch/batch_input.hpp"
#include "batch/batch_shard.hpp"
#include "clef/result.hpp"
#include "common/input_file.hpp"

namespace clef::cli {

/// Flags that contradict each other are refused, never silently resolved.
Status check_flags(const BatchFlags& flags);

/// A --record into the input or output, flags for another format, an output that is one of the
/// inputs, bad metrics targets.
Status check_files(const BatchFlags& flags, const CLI::App& command, InputFormat format);

/// The shard this run decides (--shard), with --rate-total and --rate-store checked against it.
Result<std::optional<Shard>> shard_of_run(const BatchFlags& flags);

/// --shard reads a regular file named on the command line: every shard reads the whole input,
/// and clef merge reads it again (hashing a stream for the run record would take its lines).
Status check_shardable(const BatchFlags& flags, const std::optional<Shard>& shard,
                       const InputFile& input);

}  // namespace clef::cli

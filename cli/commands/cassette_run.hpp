// What --record and --replay change in a command's run: the files a cassette must not be, the
// cassette failure that stops the run, and the retries a replay never makes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "clef/batch.hpp"
#include "clef/client.hpp"
#include "common/context.hpp"
#include "flags/connection.hpp"

namespace clef::cli {

/// Refuses --record naming one of `files` (role, path), e.g. {"the input", INPUT}: the
/// recording would be appended to it. Paths are compared as files (a link or "./x" is the same
/// file), and by their canonical names when they do not exist yet.
Status check_record_path(const ConnectionFlags& flags,
                         const std::vector<std::pair<std::string, std::string>>& files);

/// A batch over `client`: no item starts once its --record cassette cannot be written (each
/// would be paid for and not recorded), and under --replay a recorded 429/503 fails its item at
/// once rather than pausing the batch and replaying it again.
void adapt_batch_options(const ConnectionFlags& flags, const Client& client, BatchOptions& options);

/// When `client`'s --record cassette could not be written: prints why and returns the exit
/// code for an output that cannot be written (7). Else 0.
int cassette_failure_exit(const Client& client, const Context& context);

}  // namespace clef::cli

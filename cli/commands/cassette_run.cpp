// The implementation of cassette_run.hpp: what --record and --replay change in a command's run.
#include "commands/cassette_run.hpp"

#include <sys/stat.h>

#include "clef/cassette.hpp"
#include "common/exit_codes.hpp"
#include "common/file_roles.hpp"
#include "output/error_report.hpp"

namespace clef::cli {
namespace {

bool same_file(const std::string& a, const std::string& b) {
  struct stat first {};
  struct stat second {};
  if (::stat(a.c_str(), &first) == 0 && ::stat(b.c_str(), &second) == 0) {
    return first.st_dev == second.st_dev && first.st_ino == second.st_ino;
  }
  const auto resolved_a = resolved_path(a);
  const auto resolved_b = resolved_path(b);
  return resolved_a && resolved_b && *resolved_a == *resolved_b;
}

std::optional<Error> recording_failure(const Client& client) {
  // Decisions are recorded on the loop; what is not a decision (doctor, models) blocking.
  if (const auto recording =
          std::dynamic_pointer_cast<AsyncRecordingTransport>(client.options().async_transport)) {
    return recording->failure();
  }
  const auto recording = std::dynamic_pointer_cast<RecordingTransport>(client.options().transport);
  return recording ? recording->failure() : std::nullopt;
}

}  // namespace

Status check_record_path(const ConnectionFlags& flags,
                         const std::vector<std::pair<std::string, std::string>>& files) {
  if (flags.record.empty()) return {};
  for (const auto& [role, path] : files) {
    if (path.empty() || path == "-" || !same_file(flags.record, path)) continue;
    return make_error(ErrorKind::invalid_input,
                      "--record " + flags.record + " is " + role +
                          ": the recording would be appended to it; record to a file of its own",
                      "--record");
  }
  return {};
}

void adapt_batch_options(const ConnectionFlags& flags, const Client& client,
                         BatchOptions& options) {
  if (!flags.replay.empty()) options.throttle_budget = std::chrono::milliseconds(0);
  options.should_stop = [stop = std::move(options.should_stop), &client] {
    return (stop && stop()) || recording_failure(client).has_value();
  };
}

int cassette_failure_exit(const Client& client, const Context& context) {
  const auto failure = recording_failure(client);
  if (!failure) return 0;
  print_error(context, failure->message + " (" + failure->where + ")",
              "no request was sent after it (answers already received are not in the "
              "cassette): free space or fix the path, then record again");
  return as_int(ExitCode::output);
}

}  // namespace clef::cli

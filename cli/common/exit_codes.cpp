// The implementation of exit_codes.hpp: the one exit-code table of the clef command.
#include "common/exit_codes.hpp"

namespace clef::cli {

const std::vector<ExitCodeMeaning>& exit_code_meanings() {
  static const std::vector<ExitCodeMeaning> meanings = {
      {ExitCode::ok, "Success."},
      {ExitCode::gate_failed,
       "A gate failed: --expect, --min-confidence, or clef eval's --require or --baseline."},
      {ExitCode::usage,
       "Usage or bad input: flags, question files, state, images, audio, video, a model's limit."},
      {ExitCode::authentication,
       "Authentication (missing or refused credentials, a proxy's 407) or a used-up quota."},
      {ExitCode::server,
       "A server error after retries: HTTP 4xx/5xx, model missing, an invalid response."},
      {ExitCode::transport, "Transport: connection refused, timeout, TLS."},
      {ExitCode::partial_failure,
       "clef batch and clef eval: some items failed (their errors are in the output or the "
       "summary)."},
      {ExitCode::output,
       "The output cannot be written: disk full, a closed pipe, a cassette that cannot be "
       "written."},
      {ExitCode::abstained, "clef ask --policy: an answer is below its threshold (ask a person)."},
      {ExitCode::not_recorded, "--replay: the cassette has no recording of a request."},
      {ExitCode::incomplete, "clef merge: an item or a whole shard has no result."},
      {ExitCode::interrupted, "Interrupted (SIGINT or SIGTERM)."},
  };
  return meanings;
}

ExitCode exit_code_for(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::invalid_input:
      return ExitCode::usage;
    case ErrorKind::authentication:
    case ErrorKind::quota_exhausted:
      return ExitCode::authentication;
    case ErrorKind::connection_failed:
    case ErrorKind::timeout:
    case ErrorKind::tls:
      return ExitCode::transport;
    case ErrorKind::cancelled:
      return ExitCode::interrupted;
    case ErrorKind::not_recorded:
      return ExitCode::not_recorded;
    case ErrorKind::not_found:
    case ErrorKind::rate_limited:
    case ErrorKind::request_rejected:
    case ErrorKind::server_error:
    case ErrorKind::invalid_response:
      return ExitCode::server;
  }
  return ExitCode::server;
}

}  // namespace clef::cli

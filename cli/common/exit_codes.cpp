// The implementation of exit_codes.hpp: the one exit-code table of the clef command.
#include "common/exit_codes.hpp"

namespace clef::cli {

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

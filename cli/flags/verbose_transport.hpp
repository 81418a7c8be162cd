// --verbose: every HTTP attempt any command makes, one line out and one line back, on stderr.
#pragma once

#include <memory>
#include <ostream>

#include "clef/async_transport.hpp"
#include "clef/transport.hpp"

namespace clef::cli {

/// Wraps `inner` so each request prints "clef: > POST URL (N bytes)" with its headers
/// (Authorization shown as "Bearer <redacted>") and each outcome "clef: < HTTP 200, N bytes,
/// 12 ms" or "clef: < failed after 12 ms: …". Safe from several threads (batch).
std::shared_ptr<Transport> make_verbose_transport(std::shared_ptr<Transport> inner,
                                                  std::ostream& log);

/// The same in front of an event loop, for submit() and batches: the request's line as it
/// starts, the outcome's on the loop thread.
std::shared_ptr<AsyncTransport> make_verbose_transport(std::shared_ptr<AsyncTransport> inner,
                                                       std::ostream& log);

}  // namespace clef::cli

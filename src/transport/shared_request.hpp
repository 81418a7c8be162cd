// Internal: a transport that sends a request its caller keeps, not a copy of it. The engine keeps
// each request between attempts, and a stage keeps it for the answer; copying it for the
// transport — URL, headers, body — was five allocations a decision on the loop thread.
#pragma once

#include <memory>

#include "clef/async_transport.hpp"

namespace clef::detail {

class SharedRequestTransport {
 public:
  virtual ~SharedRequestTransport() = default;
  /// As AsyncTransport::start, the request shared: nobody changes it while it is in flight.
  virtual void start_shared(std::shared_ptr<const HttpRequest> request, ResponseHandler done) = 0;
};

/// `transport` as a SharedRequestTransport, or null (an application's own transport, -v's).
inline SharedRequestTransport* shared_form(AsyncTransport* transport) {
  return dynamic_cast<SharedRequestTransport*>(transport);
}

/// Starts `request` on `transport`: shared through `shared` (shared_form(transport)) when there
/// is one, else as a copy through the public interface.
inline void start_shared_on(AsyncTransport& transport, SharedRequestTransport* shared,
                            std::shared_ptr<const HttpRequest> request, ResponseHandler done) {
  if (shared)
    shared->start_shared(std::move(request), std::move(done));
  else
    transport.start(*request, std::move(done));
}

}  // namespace clef::detail

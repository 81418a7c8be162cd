// Internal: TCP sockets on 127.0.0.1 — the mock's listener, which never shares a busy port.
// (unused_port() and refusing_port(), for tests, are declared in clef/mock.hpp.)
#pragma once

#include "clef/result.hpp"

namespace clef::mock_detail {

/// A socket listening on 127.0.0.1:`port` (0: a free one), or why not. A port outside 0..65535,
/// one this process may not take, and one anything already listens on are refused
/// (ErrorKind::invalid_input), never shared: no SO_REUSEPORT. Running out of sockets is
/// ErrorKind::connection_failed.
Result<int> listen_on_loopback(int port);

/// The port a bound socket has.
int port_of(int sock);

}  // namespace clef::mock_detail

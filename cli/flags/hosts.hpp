// Several servers for one batch: --host repeated, --hosts FILE, and the check that every host
// serves the same model before anything is sent.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "clef/async_transport.hpp"
#include "clef/client.hpp"
#include "common/context.hpp"
#include "flags/connection.hpp"

namespace clef::cli {

/// Refused unless `value` is a host clef can send to as written: an http(s) URL or host[:port],
/// a port from 1 to 65535, no query or fragment, only printable ASCII. `where` names the flag
/// or the file and line.
Status check_host_value(const std::string& value, const std::string& where);

/// Adds --hosts FILE and --mixed-fleet to `command` (batch, eval).
void add_hosts_flags(CLI::App& command, ConnectionFlags& flags);

/// Every host of --host and of --hosts FILE (one base URL a line; blank lines and lines starting
/// with # skipped), in that order. Refused: a host given twice, more than 256, a file that
/// cannot be read or lists none.
Result<std::vector<std::string>> all_hosts(const ConnectionFlags& flags);

/// One client per host (one client for the default host when none is given). With several
/// Ollama hosts, each host's /api/tags must list the model with one digest: a host that lists
/// another digest, or not the model at all, is refused unless --mixed-fleet; a host that cannot
/// be reached is only warned about (the batch sets it aside and probes it again). --record and
/// --replay take one host. Their decisions run on `driven` when given (the caller turns it:
/// BatchOptions::drive_loop), else on one loop thread of clef's own.
Result<std::vector<Client>> make_clients(const ConnectionFlags& flags, const Context& context,
                                         std::shared_ptr<DrivenCurlLoop> driven = nullptr);

/// The version of the model the hosts serve, as a run records it: each Ollama host's
/// "NAME@DIGEST" from /api/tags (asked at once, at most 10 s each, one attempt), the distinct
/// ones joined by ", " (a --mixed-fleet can serve several); "" when the backend publishes no
/// version, the run replays a cassette, or no host could say.
std::string served_model_version(const ConnectionFlags& flags, const std::vector<Client>& clients,
                                 const Context& context);

}  // namespace clef::cli

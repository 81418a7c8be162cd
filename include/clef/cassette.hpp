// clef: record exchanges with a server into a cassette file, and replay them with no network —
// so an application's tests, and a CI job, run without a model.
//
//     auto recording = clef::make_recording_transport(clef::make_curl_transport(),
//                                                     "decisions.cassette.jsonl", "ollama");
//     // … later, in a test with no server:
//     auto replay = clef::make_replay_transport("decisions.cassette.jsonl", "ollama");
//     clef::ClientOptions options;
//     if (replay) options.transport = replay.value();
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "clef/result.hpp"
#include "clef/transport.hpp"

namespace clef {

/// The key an exchange is stored under: SHA-256 over `tag` (the backend's name), the URL's path
/// (which holds the model for Workers AI) and the body (which holds it for the others). clef
/// writes a request's body the same way every time, so the same request has the same key; the
/// host, the port and the headers (the token) are not part of it.
std::string exchange_key(std::string_view tag, const HttpRequest& request);

/// Sends through `inner` and appends every complete response (any status) to the cassette at
/// `path` as one JSON line: the key, the request's path and body, the status, the headers that
/// matter (content type, retry-after, request ids) and the body. Never the request's headers,
/// so never a token. Safe from several threads; each line is one write.
Result<std::shared_ptr<Transport>> make_recording_transport(std::shared_ptr<Transport> inner,
                                                            const std::string& path,
                                                            std::string tag);

/// Answers from the cassette at `path` with no network: the last recording of each key wins
/// (a retry's success after a 503). A request with no recording fails with
/// ErrorKind::not_recorded, naming its questions and the start of its state.
Result<std::shared_ptr<Transport>> make_replay_transport(const std::string& path, std::string tag);

}  // namespace clef

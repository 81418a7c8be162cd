// clef: record exchanges with a server into a cassette file, and replay them with no network —
// so an application's tests, and a CI job, run without a model.
//
//     auto recording = clef::make_recording_transport(clef::make_curl_transport(),
//                                                     "decisions.cassette.jsonl", "ollama");
//     // … later, in a test with no server:
//     auto replay = clef::make_replay_transport("decisions.cassette.jsonl", "ollama");
//     clef::ClientOptions options;
//     options.retry.max_attempts = 1;  // a recorded 429 or 503 is final: no wait, no resend
//     if (replay) options.transport = replay.value();
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clef/async_transport.hpp"
#include "clef/export.hpp"
#include "clef/result.hpp"
#include "clef/transport.hpp"

namespace clef {

/// The key an exchange is stored under: SHA-256 over `tag` (the backend's name), the URL's path
/// (which holds the model for Workers AI) and the body (which holds it for the others). clef
/// writes a request's body the same way every time, so the same request has the same key; the
/// host, the port and the headers (the token) are not part of it.
CLEF_API std::string exchange_key(std::string_view tag, const HttpRequest& request);

/// A Transport that appends each exchange to a cassette, and says when it could not.
class CLEF_API RecordingTransport : public Transport {
 public:
  /// Why the cassette could not be written (disk full, a file-size limit…), once a line failed;
  /// empty while every line was written. The exchange whose line failed still returns its
  /// response; every later send fails with ErrorKind::cancelled without reaching the server,
  /// since its answer would be paid for and not recorded.
  virtual std::optional<Error> failure() const = 0;
};

/// Sends through `inner` and appends every complete response (any status) to the cassette at
/// `path` as one JSON line: the key, the request's path and body, the status, the headers that
/// matter (content type, retry-after, request ids) and the body. Never the request's headers;
/// and every credential the request carried (the Authorization value and its token, an API key
/// header, a password in the URL) is replaced by "<redacted>" wherever the server echoed it, so
/// a cassette holds no token. A new cassette is created 0600; an existing file that is not a
/// cassette (its first or last whole line is not a recording) is refused, neither cut nor
/// appended to. Safe from several threads; each line is one write.
CLEF_API Result<std::shared_ptr<RecordingTransport>> make_recording_transport(
    std::shared_ptr<Transport> inner, const std::string& path, std::string tag);

/// The recorder in front of an AsyncTransport (ClientOptions::async_transport), for submit()
/// and batches: the same cassette lines, each appended on the loop thread as its response
/// arrives, with no thread per request.
class CLEF_API AsyncRecordingTransport : public AsyncTransport {
 public:
  /// As RecordingTransport::failure().
  virtual std::optional<Error> failure() const = 0;
};

/// make_recording_transport() in front of `inner` (a curl loop, or a chain of them).
CLEF_API Result<std::shared_ptr<AsyncRecordingTransport>> make_recording_transport(
    std::shared_ptr<AsyncTransport> inner, const std::string& path, std::string tag);

/// A Transport that answers from a cassette, and says what it skipped reading it.
class CLEF_API ReplayTransport : public Transport {
 public:
  /// Lines read but not used, for the caller to show: a last line with no newline that is not
  /// a whole recording (the recorder was killed or the disk filled mid-line) is skipped.
  virtual const std::vector<std::string>& warnings() const = 0;
};

/// Answers from the cassette at `path` with no network: the last recording of each key wins
/// (a retry's success after a 503). A request with no recording fails with
/// ErrorKind::not_recorded, naming its questions and the start of its state. A recorded error
/// is replayed each time it is asked: with the client's retries a 503 is sent again (and its
/// Retry-After waited out), so a replaying client sets RetryPolicy::max_attempts to 1.
/// Fails (naming the line) when any line but a torn last one is not a recording: not a JSON
/// object with a string "key", a string "body" and an integer "status" in 100..599.
CLEF_API Result<std::shared_ptr<ReplayTransport>> make_replay_transport(const std::string& path,
                                                                        std::string tag);

/// `replay` for Client::submit and batches (ClientOptions::async_transport): each answer is
/// looked up on the thread that starts the request and delivered on one loop thread made for
/// it, which opens no connection.
CLEF_API std::shared_ptr<AsyncTransport> make_async_replay(std::shared_ptr<ReplayTransport> replay);
/// The same, delivered on `loop` instead (make_driven_curl_loop(), which the application turns),
/// which it sends nothing through.
CLEF_API std::shared_ptr<AsyncTransport> make_async_replay(std::shared_ptr<ReplayTransport> replay,
                                                           std::shared_ptr<AsyncTransport> loop);

}  // namespace clef

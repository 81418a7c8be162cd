// Internal: one step a request passes through on its way to the server and back (the cache, the
// cassette's recorder and its replay), written once and run either around a blocking Transport or
// in front of an AsyncTransport on its loop — so `--cache`, `--record` and `--replay` cost a batch
// no thread per request.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "clef/async_transport.hpp"
#include "clef/transport.hpp"
#include "store/answer_verdict.hpp"
#include "transport/shared_request.hpp"

namespace clef::detail {

/// What a stage keeps of one request from answer() to received(): the cache, the request's key
/// (a SHA-256 of the body, costly to compute again) as four words; nothing when none was kept.
using StageNote = std::optional<std::array<std::uint64_t, 4>>;

class Stage {
 public:
  virtual ~Stage() = default;
  /// An outcome without sending (a cache hit, a replay, a refusal), or nullopt to send on. On
  /// a loop this runs on the thread that starts the request, so it must not wait on the network.
  virtual std::optional<Result<HttpResponse>> answer(const HttpRequest& request,
                                                     StageNote& note) = 0;
  /// The outcome from further in (sent, or answered by a stage there), before the caller sees it;
  /// not called for this stage's own answer. On a loop it runs on the loop thread. `note` is
  /// what answer() left in it for this request. `judged`: it goes on to a client's handler
  /// (handler_judges), whose verdict on it then comes to verdict().
  virtual void received(const HttpRequest& request, const StageNote& note,
                        Result<HttpResponse>& response, bool judged) = 0;
  /// What the client made of a response received() had with `judged` true, while the response is
  /// still the client's; never called when the client read none (cancelled meanwhile).
  virtual void verdict(const HttpRequest& /*request*/, const StageNote& /*note*/,
                       const AnswerVerdict& /*verdict*/) {}
};

/// `stage` around a blocking send through `inner`.
Result<HttpResponse> send_through(Stage& stage, Transport& inner, const HttpRequest& request);

/// A Transport that is `stage` around `inner` (send_through).
std::shared_ptr<Transport> staged_transport(std::shared_ptr<Stage> stage,
                                            std::shared_ptr<Transport> inner);

/// `stage` in front of `inner` (`inner_shared`: its shared_form): its own answer is delivered on
/// a loop thread of `inner` (through after(0)), as every handler is; what `inner` answers passes
/// through received() first, and when `done` judges (handler_judges), the verdict comes to
/// verdict() and the handler that goes to `inner` judges too (so stages stack).
void start_through(const std::shared_ptr<Stage>& stage, AsyncTransport& inner,
                   SharedRequestTransport* inner_shared, std::shared_ptr<const HttpRequest> request,
                   ResponseHandler done);

/// An AsyncTransport that is `stage` in front of `inner`.
std::shared_ptr<AsyncTransport> staged_loop(std::shared_ptr<Stage> stage,
                                            std::shared_ptr<AsyncTransport> inner);

}  // namespace clef::detail

// Internal: how a stage in front of a clef client leaves the reading of an answer to the client.
// A client reads every response it is handed as a decision; the cache, which keeps only whole
// answers, read each one itself first — a second parse and validation of every miss, about a
// sixth of what a miss cost a batch. Now a client's handler is marked (JudgingHandler) and says
// what it made of each response (judge_answer) before it does anything else with it; a stage
// that hands a response to such a handler opens a VerdictScope to hear it.
#pragma once

#include <memory>

#include "clef/async_transport.hpp"
#include "clef/options.hpp"
#include "clef/transport.hpp"

namespace clef::detail {

/// What a client made of a response.
struct AnswerVerdict {
  const HttpResponse& response;
  bool whole;                           ///< A decision with every question answered and valid.
  Backend backend;                      ///< Read as this backend's answer,
  const ValidationOptions& validation;  ///< under these checks.
};

/// A response handler that judges: a clef client's, which gives judge_answer() its verdict on the
/// response before anything else it does with it (when it reads it at all). A function and its
/// state rather than a lambda, so that handler_judges() can tell it from any other handler.
struct JudgingHandler {
  std::shared_ptr<void> state;
  void (*handle)(void* state, Result<HttpResponse>&& response) = nullptr;
  void operator()(Result<HttpResponse> response) const { handle(state.get(), std::move(response)); }
};

/// Whether `a` and `b` accept the same answers.
bool same_checks(const ValidationOptions& a, const ValidationOptions& b);

/// Whether `handler` is a JudgingHandler.
bool handler_judges(const ResponseHandler& handler);

/// Gives `verdict` to each VerdictScope open on this thread that has not had one, the innermost
/// first: the stages a response passed on its way to the client.
void judge_answer(const AnswerVerdict& verdict);

/// Open on a thread while a stage hands a response to a JudgingHandler: the verdict given there
/// meanwhile goes to `take(context, verdict)`, while the response is still the client's to read.
class VerdictScope {
 public:
  using Take = void (*)(void* context, const AnswerVerdict& verdict);
  VerdictScope(Take take, void* context);
  ~VerdictScope();
  VerdictScope(const VerdictScope&) = delete;
  VerdictScope& operator=(const VerdictScope&) = delete;

 private:
  friend void judge_answer(const AnswerVerdict& verdict);
  Take m_take;
  void* m_context;
  VerdictScope* m_outer;
  bool m_judged = false;
};

}  // namespace clef::detail

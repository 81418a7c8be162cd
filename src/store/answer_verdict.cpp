// The implementation of answer_verdict.hpp.
#include "store/answer_verdict.hpp"

namespace clef::detail {
namespace {

/// The innermost VerdictScope open on this thread.
thread_local VerdictScope* innermost = nullptr;

}  // namespace

bool same_checks(const ValidationOptions& a, const ValidationOptions& b) {
  // A member added to ValidationOptions must be compared here too.
  static_assert(sizeof(ValidationOptions) == 4 * sizeof(double) + sizeof(double),
                "same_checks compares every member of ValidationOptions");
  return a.sum_tolerance == b.sum_tolerance && a.renormalize_tolerance == b.renormalize_tolerance &&
         a.verdict.yes_at_least == b.verdict.yes_at_least &&
         a.verdict.no_at_most == b.verdict.no_at_most &&
         a.require_asked_model == b.require_asked_model;
}

bool handler_judges(const ResponseHandler& handler) {
  return handler.target<JudgingHandler>() != nullptr;
}

void judge_answer(const AnswerVerdict& verdict) {
  // Outward through the scopes still waiting: a scope further out that had its verdict belongs
  // to a response handed on before (a client judges a response first, so no scope of another
  // response can open inside one still waiting).
  for (VerdictScope* scope = innermost; scope != nullptr && !scope->m_judged;
       scope = scope->m_outer) {
    scope->m_judged = true;
    scope->m_take(scope->m_context, verdict);
  }
}

VerdictScope::VerdictScope(Take take, void* context)
    : m_take(take), m_context(context), m_outer(innermost) {
  innermost = this;
}

VerdictScope::~VerdictScope() {
  innermost = m_outer;
}

}  // namespace clef::detail

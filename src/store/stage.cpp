// The implementation of stage.hpp: a stage around a blocking send, or in front of a loop.
#include "store/stage.hpp"

#include "transport/timer_queue.hpp"

namespace clef::detail {

Result<HttpResponse> send_through(Stage& stage, Transport& inner, const HttpRequest& request) {
  StageNote note;
  if (auto answered = stage.answer(request, note)) return std::move(*answered);
  auto response = inner.send(request);
  stage.received(request, note, response, false);
  return response;
}

namespace {

class StagedTransport final : public Transport {
 public:
  StagedTransport(std::shared_ptr<Stage> stage, std::shared_ptr<Transport> inner)
      : m_stage(std::move(stage)), m_inner(std::move(inner)) {}
  Result<HttpResponse> send(const HttpRequest& request) override {
    return send_through(*m_stage, *m_inner, request);
  }

 private:
  std::shared_ptr<Stage> m_stage;
  std::shared_ptr<Transport> m_inner;
};

/// What a request that went on past a stage keeps for the way back.
struct Passage {
  std::shared_ptr<Stage> stage;
  std::shared_ptr<const HttpRequest> request;  ///< The one the inner transport sends.
  StageNote note;
  ResponseHandler done;

  void back(Result<HttpResponse>&& response, bool judged) {
    stage->received(*request, note, response, judged);
    if (!judged) return call_handler(done, std::move(response));
    VerdictScope scope(
        [](void* context, const AnswerVerdict& verdict) {
          const auto& passage = *static_cast<const Passage*>(context);
          passage.stage->verdict(*passage.request, passage.note, verdict);
        },
        this);
    call_handler(done, std::move(response));
  }
};

}  // namespace

std::shared_ptr<Transport> staged_transport(std::shared_ptr<Stage> stage,
                                            std::shared_ptr<Transport> inner) {
  return std::make_shared<StagedTransport>(std::move(stage), std::move(inner));
}

void start_through(const std::shared_ptr<Stage>& stage, AsyncTransport& inner,
                   SharedRequestTransport* inner_shared, std::shared_ptr<const HttpRequest> request,
                   ResponseHandler done) {
  StageNote note;
  if (auto answered = stage->answer(*request, note)) {
    auto outcome = std::make_shared<Result<HttpResponse>>(std::move(*answered));
    // Complete already: delivered even while the loop shuts down.
    inner.after(std::chrono::milliseconds(0), [outcome, done = std::move(done)](bool) mutable {
      call_handler(done, std::move(*outcome));
    });
    return;
  }
  const bool judged = handler_judges(done);
  auto passage =
      std::make_shared<Passage>(Passage{stage, request, std::move(note), std::move(done)});
  if (judged) {
    JudgingHandler back{passage, [](void* state, Result<HttpResponse>&& response) {
                          static_cast<Passage*>(state)->back(std::move(response), true);
                        }};
    return start_shared_on(inner, inner_shared, std::move(request), std::move(back));
  }
  start_shared_on(inner, inner_shared, std::move(request),
                  [passage = std::move(passage)](Result<HttpResponse> response) {
                    passage->back(std::move(response), false);
                  });
}

namespace {

class StagedLoop final : public AsyncTransport, public SharedRequestTransport {
 public:
  StagedLoop(std::shared_ptr<Stage> stage, std::shared_ptr<AsyncTransport> inner)
      : m_stage(std::move(stage)),
        m_inner(std::move(inner)),
        m_inner_shared(shared_form(m_inner.get())) {}

  void start(HttpRequest request, ResponseHandler done) override {
    start_shared(std::make_shared<const HttpRequest>(std::move(request)), std::move(done));
  }
  void start_shared(std::shared_ptr<const HttpRequest> request, ResponseHandler done) override {
    start_through(m_stage, *m_inner, m_inner_shared, std::move(request), std::move(done));
  }
  void after(std::chrono::milliseconds delay,
             std::function<void(bool shutting_down)> task) override {
    m_inner->after(delay, std::move(task));
  }
  bool running_here() const override { return m_inner->running_here(); }

 private:
  std::shared_ptr<Stage> m_stage;
  std::shared_ptr<AsyncTransport> m_inner;
  SharedRequestTransport* m_inner_shared;
};

}  // namespace

std::shared_ptr<AsyncTransport> staged_loop(std::shared_ptr<Stage> stage,
                                            std::shared_ptr<AsyncTransport> inner) {
  return std::make_shared<StagedLoop>(std::move(stage), std::move(inner));
}

}  // namespace clef::detail

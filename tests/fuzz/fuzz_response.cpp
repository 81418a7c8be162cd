// libFuzzer: a 200 body from every backend through the client's parser and validator, for a
// fixed request with one question of each type. The first byte picks the backend.
#include <cstddef>
#include <cstdint>
#include <string>

#include "clef/clef.hpp"

namespace {

class OneReply final : public clef::Transport {
 public:
  std::string body;
  clef::Result<clef::HttpResponse> send(const clef::HttpRequest&) override {
    clef::HttpResponse response;
    response.status = 200;
    response.body = body;
    response.headers = {{"cf-ai-req-id", "req-1"}};
    return response;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const clef::Backend backends[] = {clef::Backend::ollama, clef::Backend::workers_ai,
                                           clef::Backend::systemone};
  auto transport = std::make_shared<OneReply>();
  transport->body.assign(reinterpret_cast<const char*>(data) + 1, size - 1);
  clef::ClientOptions options;
  options.backend = backends[data[0] % 3];
  options.base_url = "http://127.0.0.1:1";
  options.account_id = "acc9";
  options.api_token = "e";  // a token the placeholder contains: redaction must still end
  options.transport = transport;
  options.retry.max_attempts = 1;
  auto client = clef::Client::create(options);
  if (!client) __builtin_trap();
  clef::DecisionRequest request;
  request.state = clef::State::text("ticket");
  request.questions = {
      clef::Question::choice("team", "Which team?", {{"billing", "Money"}, {"technical", {}}}),
      clef::Question::yes_no("refund", "Refund?"),
      clef::Question::score("urgency", "How urgent?", {"Routine", "Soon", "Urgent"})};
  auto decision = client->decide(request);
  if (decision) {
    for (const auto& answer : decision->answers) {
      (void)answer.winner();
      (void)answer.confidence();
    }
  } else {
    (void)decision.error().to_string();
  }
  return 0;
}

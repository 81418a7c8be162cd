// libFuzzer: a 200 body from every backend through the client's parser and validator, for a
// fixed request with one question of each type (a box too, for the systemone backend, as
// TypeSafe's Jev). The first byte picks the backend.
// Oracles beyond "no crash", what the README promises of every answer marked ok: one answer
// per question in question order; every option has a probability in [0, 1]; they sum to 1
// within the validation tolerance; the winner is the most likely option (ties: the first);
// and clef's confidence is in [0, 1].
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "clef/clef.hpp"
#include "inline_transport.hpp"

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
  options.async_transport = std::make_shared<clef::fuzz::InlineTransport>(transport);
  options.retry.max_attempts = 1;
  auto client = clef::Client::create(options);
  if (!client) __builtin_trap();
  clef::DecisionRequest request;
  request.state = clef::State::text("ticket");
  request.questions = {
      clef::Question::choice("team", "Which team?", {{"billing", "Money"}, {"technical", {}}}),
      clef::Question::yes_no("refund", "Refund?"),
      clef::Question::score("urgency", "How urgent?", {"Routine", "Soon", "Urgent"})};
  if (options.backend == clef::Backend::systemone) {
    // TypeSafe's Jev 1.14: a box, about a 280 x 280 PNG the state names.
    static const clef::Image image =
        clef::Image::from_bytes(
            std::string("\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\x01\x18\0\0\x01\x18", 24))
            .value();
    request.model = "jev-1.14.0";
    request.state = clef::State::text("ticket image_1");
    request.images = {image};
    request.questions.push_back(clef::Question::box("where", "the square in image_1"));
  }
  auto decision = client->decide(request);
  if (!decision) {
    (void)decision.error().to_string();
    return 0;
  }
  const double tolerance = options.validation.sum_tolerance + 1e-9;
  if (decision->answers.size() != request.questions.size()) __builtin_trap();
  for (std::size_t i = 0; i < decision->answers.size(); ++i) {
    const clef::Answer& answer = decision->answers[i];
    if (answer.question != request.questions[i].name) __builtin_trap();
    (void)answer.winner();
    if (!answer.ok()) continue;
    const double confidence = answer.confidence();
    if (!(confidence >= -1e-9 && confidence <= 1 + 1e-9)) __builtin_trap();
    if (const auto* box = answer.box()) {
      // Whole, never clamped; its winner is the gold form eval reads back as the same box.
      if (!(box->top >= 0 && box->top < box->bottom && box->bottom <= 1)) __builtin_trap();
      if (!(box->left >= 0 && box->left < box->right && box->right <= 1)) __builtin_trap();
      auto gold = clef::gold_label(request.questions[i], answer.winner());
      if (!gold || gold.value() != answer.winner()) __builtin_trap();
      continue;
    }
    std::vector<double> p;
    std::size_t winner = 0;
    if (const auto* choice = answer.choice()) {
      if (choice->probabilities.size() != request.questions[i].options.size()) __builtin_trap();
      for (std::size_t k = 0; k < choice->probabilities.size(); ++k) {
        p.push_back(choice->probabilities[k].probability);
        if (choice->probabilities[k].label == choice->choice) winner = k;
      }
    } else if (const auto* score = answer.score()) {
      if (score->probabilities.size() != request.questions[i].levels.size()) __builtin_trap();
      p = score->probabilities;
      winner = static_cast<std::size_t>(score->most_likely_level);
    } else if (const auto* noul = answer.yes_no()) {
      p = {noul->p_true, 1 - noul->p_true};
    } else {
      __builtin_trap();  // ok without a value
    }
    double sum = 0;
    for (double x : p) {
      if (!(x >= 0 && x <= 1)) __builtin_trap();
      sum += x;
    }
    if (std::fabs(sum - 1) > tolerance) __builtin_trap();
    // The winner is the most likely option; a server may break an exact tie either way.
    if (!answer.yes_no()) {
      for (double x : p) {
        if (x > p[winner] + 1e-6) __builtin_trap();
      }
    }
  }
  return 0;
}

// A program outside clef's tree testing itself against clef::MockServer (clef::mock), as an
// application's GoogleTest would: an ephemeral port, a real decision, no model.
#include <clef/clef.hpp>
#include <clef/mock.hpp>

#include <iostream>

int main() {
  clef::MockServer server(clef::MockProfile::ollama);
  clef::ClientOptions options;
  options.base_url = server.base_url();
  auto client = clef::Client::create(options);
  if (!client) return 1;
  clef::DecisionRequest request;
  request.state = clef::State::text("I was charged twice. Please refund the extra payment.");
  request.questions.push_back(clef::Question::yes_no("refund", "Asks for a refund?"));
  auto decision = client->decide(request);
  if (!decision) {
    std::cerr << decision.error().to_string() << "\n";
    return 1;
  }
  std::cout << "mock decided refund " << decision->answers[0].winner() << "\n";
  return 0;
}

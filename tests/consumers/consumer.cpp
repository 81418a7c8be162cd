// A program outside clef's tree, linking clef::clef like any application would.
#include <clef/clef.hpp>

#include <iostream>

int main() {
  clef::ClientOptions options;
  options.base_url = "http://127.0.0.1:11434";
  auto client = clef::Client::create(options);
  if (!client) return 1;
  clef::DecisionRequest request;
  request.state = clef::State::text("I was charged twice.");
  request.questions.push_back(clef::Question::yes_no("refund", "Asks for a refund?"));
  auto body = client->request_body(request);
  if (!body) return 1;
  std::cout << "clef " << clef::version << " " << body.value() << "\n";
  return 0;
}

// Routes the ticket from the Clef-Flash card to a team.
//
//   route_ticket                 # asks the Ollama at OLLAMA_HOST (default 127.0.0.1:11434)
//   route_ticket --dry-run       # prints the request body and sends nothing
#include <clef/clef.hpp>

#include <iostream>
#include <string_view>

int main(int argc, char** argv) {
  const bool dry_run = argc > 1 && std::string_view(argv[1]) == "--dry-run";

  auto client = clef::Client::create(clef::ClientOptions::from_environment(clef::Backend::ollama));
  if (!client) {
    std::cerr << "route_ticket: " << client.error().to_string() << "\n";
    return 2;
  }

  clef::DecisionRequest request;
  request.state =
      clef::State::json(R"({"ticket": "I was charged twice. Please refund the extra payment."})")
          .value();
  request.questions.push_back(clef::Question::choice("team",
                                                     "Which team should handle this ticket?",
                                                     {{"billing", "Payments and refunds"},
                                                      {"technical", "Bugs and integrations"},
                                                      {"other", "None of the above"}}));

  if (dry_run) {
    auto body = client->request_body(request);
    if (!body) {
      std::cerr << "route_ticket: " << body.error().to_string() << "\n";
      return 2;
    }
    std::cout << body.value() << "\n";
    return 0;
  }

  auto decision = client->decide(request);
  if (!decision) {
    std::cerr << "route_ticket: " << decision.error().to_string() << "\n";
    if (decision.error().kind == clef::ErrorKind::connection_failed) {
      std::cerr << "route_ticket: is Ollama running at " << client->options().base_url
                << "? Start it with `ollama serve` and `ollama pull clef-flash`.\n";
    }
    return 1;
  }
  const clef::Answer& team = decision->answers.front();
  if (const clef::ChoiceAnswer* choice = team.choice()) {
    std::cout << "team: " << choice->choice << " (p=" << choice->probability << ")\n";
    for (const auto& option : choice->probabilities) {
      std::cout << "  " << option.label << " " << option.probability << "\n";
    }
    return 0;
  }
  std::cerr << "route_ticket: no usable answer: " << clef::to_string(team.status) << ": "
            << team.problem << "\n";
  return 1;
}

// clef: a C++ client for the System One decision API (POST /v1/systemone).
//
//     #include <clef/clef.hpp>
//
//     auto client = clef::Client::create(clef::ClientOptions::from_environment(clef::Backend::ollama));
//     if (!client) return 1;
//     clef::DecisionRequest request;
//     request.state = clef::State::json(R"({"ticket":"I was charged twice."})").value();
//     request.questions.push_back(clef::Question::choice(
//         "team", "Which team should handle this ticket?",
//         {{"billing", "Payments and refunds"}, {"technical", "Bugs and integrations"}}));
//     auto decision = client->decide(request);
//     if (decision) std::cout << decision->answers[0].winner() << "\n";
#pragma once

#include "clef/async_transport.hpp"
#include "clef/backend.hpp"
#include "clef/batch.hpp"
#include "clef/cache.hpp"
#include "clef/cancel.hpp"
#include "clef/cassette.hpp"
#include "clef/client.hpp"
#include "clef/decision.hpp"
#include "clef/decision_json.hpp"
#include "clef/digest.hpp"
#include "clef/error.hpp"
#include "clef/estimate.hpp"
#include "clef/eval.hpp"
#include "clef/eval_gates.hpp"
#include "clef/eval_report.hpp"
#include "clef/image.hpp"
#include "clef/json.hpp"
#include "clef/media.hpp"
#include "clef/metrics.hpp"
#include "clef/ollama.hpp"
#include "clef/options.hpp"
#include "clef/policy.hpp"
#include "clef/question.hpp"
#include "clef/request.hpp"
#include "clef/result.hpp"
#include "clef/state.hpp"
#include "clef/transport.hpp"
#include "clef/version.hpp"

// libFuzzer: a cassette file's text through make_replay_transport, then a decision replayed from
// it through the client, as `clef ask --replay` does. The seeds (corpus/cassette) record exactly
// the request below, so mutations reach the replayed status, headers and body, not only the
// line parser. Nothing may crash, hang or throw; a cassette is read or refused with its line.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "clef/cassette.hpp"
#include "clef/client.hpp"
#include "inline_transport.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/clef-fuzz-replay-" + std::to_string(::getpid());
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  auto replay = clef::make_replay_transport(path, "ollama");
  if (!replay) {
    (void)replay.error().to_string();
    return 0;
  }
  for (const auto& warning : replay.value()->warnings()) (void)warning.size();
  clef::ClientOptions options;
  options.base_url = "http://127.0.0.1:1";
  options.retry.max_attempts = 1;  // as the CLI replays: a recorded error is final
  options.async_transport = std::make_shared<clef::fuzz::InlineTransport>(replay.value());
  auto client = clef::Client::create(options);
  if (!client) __builtin_trap();
  clef::DecisionRequest request;
  request.state = clef::State::text("I was charged twice.");
  request.questions = {
      clef::Question::yes_no("refund", "Money back?"),
      clef::Question::choice("team", "Which team?", {{"billing", "Money"}, {"technical", "Bugs"}})};
  auto decision = client->decide(request);
  if (decision) {
    for (const auto& answer : decision->answers) (void)answer.winner();
  } else {
    (void)decision.error().to_string();
  }
  return 0;
}

#include "request_builder.hpp"

#include "exit_codes.hpp"

namespace clef::cli {

Result<DecisionRequest> build_request(State state, const std::vector<Question>& questions,
                                      const std::vector<std::string>& image_paths,
                                      const std::string& keep_alive) {
  DecisionRequest request;
  request.state = std::move(state);
  request.questions = questions;
  for (const auto& path : image_paths) {
    auto image = Image::from_file(path);
    if (!image) return image.error();
    request.images.push_back(std::move(image).value());
  }
  if (!keep_alive.empty()) {
    auto parsed = KeepAlive::parse(keep_alive);
    if (!parsed) return parsed.error();
    request.keep_alive = std::move(parsed).value();
  }
  return request;
}

Result<Client> make_client(const ConnectionFlags& flags, const Context& context, bool offline) {
  auto options = client_options(flags, context.cancel);
  if (!options) return options.error();
  if (offline && options->backend == Backend::workers_ai && options->api_token.empty()) {
    options->api_token = "unused-offline";  // never sent, never printed (headers are redacted)
  }
  return Client::create(std::move(options).value());
}

int report(const Context& context, const Error& error, const ConnectionFlags& flags) {
  std::string hint;
  switch (error.kind) {
    case ErrorKind::connection_failed:
      if (flags.backend == "ollama") {
        hint = "is Ollama running at " + (error.where.empty() ? "that host" : error.where) +
               "? Start it with `ollama serve`, or point --host / OLLAMA_HOST at it";
      } else {
        hint = "is the server running and reachable at that address?";
      }
      break;
    case ErrorKind::timeout:
      hint = "a cold model load can take a while: try a larger --timeout";
      break;
    case ErrorKind::authentication:
      hint = flags.backend == "workers-ai"
                 ? "set CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID, or use --api-token-file"
                 : "set CLEF_API_KEY or use --api-token-file";
      break;
    case ErrorKind::tls:
      hint = "check the server's certificate; clef never turns verification off";
      break;
    case ErrorKind::invalid_input:
      hint = "run the command with --help for the syntax";
      break;
    default:
      break;
  }
  print_error(context, error.to_string(), hint);
  return as_int(exit_code_for(error.kind));
}

}  // namespace clef::cli

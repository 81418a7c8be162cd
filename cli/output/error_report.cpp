// The implementation of error_report.hpp: how the clef command tells a person what went wrong and
// what to do next.
#include "output/error_report.hpp"

#include "common/exit_codes.hpp"
#include "common/terminal_text.hpp"

namespace clef::cli {

void print_error(const Context& context, const std::string& message, const std::string& hint) {
  context.err << "clef: error: " << terminal_safe(message) << "\n";
  if (!hint.empty()) context.err << "clef: " << terminal_safe(hint) << "\n";
}

int report(const Context& context, const Error& error, const ConnectionFlags& flags) {
  std::string hint;
  switch (error.kind) {
    case ErrorKind::connection_failed:
      if (!error.proxy.empty()) {
        hint = "the request went through the proxy " + error.proxy +
               ": is the proxy up, and can it reach the server? List the server's host in "
               "no_proxy to connect directly";
      } else if (flags.backend == Backend::ollama) {
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
      hint = through_gateway(flags)
                 ? "check the Workers AI token (CLOUDFLARE_API_TOKEN or --api-token-file) and, "
                   "for an Authenticated Gateway, its token (CF_AIG_TOKEN or --aig-token-file)"
             : flags.backend == Backend::workers_ai
                 ? "set CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID, or use --api-token-file"
             : flags.backend == Backend::openai ? "set OPENAI_API_KEY or use --api-token-file"
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

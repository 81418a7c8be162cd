// The implementation of error_report.hpp: how the clef command tells a person what went wrong and
// what to do next.
#include "output/error_report.hpp"

#include <algorithm>

#include "clef/backend.hpp"
#include "common/exit_codes.hpp"
#include "common/terminal_text.hpp"

namespace clef::cli {

void print_error(const Context& context, const std::string& message, const std::string& hint) {
  context.err << "clef: error: " << terminal_safe(message) << "\n";
  if (!hint.empty()) context.err << "clef: " << terminal_safe(hint) << "\n";
}

namespace {

/// The library names the option a problem is in (ClientOptions' fields); a person at the shell
/// set it with a flag or a variable, and is told those.
std::string as_typed(const std::string& where, const ConnectionFlags& flags) {
  const BackendTraits& traits = traits_of(flags.backend);
  if (where == "base_url")
    return traits.host_variable ? std::string("--host / ") + traits.host_variable : "--host";
  if (where == "api_token") {
    return traits.token_variable ? std::string("--api-token-file / ") + traits.token_variable
                                 : "--api-token-file";
  }
  if (where == "account_id") return std::string("--account-id / ") + workers_ai_account_variable;
  if (where == "model") return "--model";
  if (where == "ca_file") return "--ca-cert";
  if (where == "connect_timeout") return "--connect-timeout";
  if (where == "request_timeout") return "--timeout";
  if (where == "keep_alive") return "--keep-alive";
  if (where == "gateway") return "--gateway";
  return where;
}

/// What to set when the server refused the credentials.
std::string credentials_hint(const ConnectionFlags& flags) {
  const BackendTraits& traits = traits_of(flags.backend);
  if (through_gateway(flags)) {
    return std::string("check the ") + traits.server + " token (" + traits.token_variable +
           " or --api-token-file) and, for an Authenticated Gateway, its token (CF_AIG_TOKEN or "
           "--aig-token-file)";
  }
  if (!traits.token_variable) {
    const bool sent = !flags.api_token_file.empty() ||
                      std::any_of(flags.hosts.begin(), flags.hosts.end(), [](const auto& host) {
                        return url_without_credentials(host) != host;
                      });
    if (!sent) {
      return "clef sent none: give what the proxy in front of the server wants in its URL "
             "(--host http://USER:PASSWORD@…) or with --api-token-file";
    }
    return "check the user and password in the server's URL (--host), or the token in "
           "--api-token-file";
  }
  return std::string("set ") + traits.token_variable +
         (traits.needs_account ? std::string(" and ") + workers_ai_account_variable + "," : "") +
         " or use --api-token-file";
}

/// Whether an invalid input is the command line's: its error names a flag ("--label", "--host /
/// OLLAMA_HOST") or an argument ("DATA"). A problem inside a file (a path, a line or a field of
/// it, however the path is written) is not helped by the syntax.
bool about_the_syntax(const std::string& where) {
  if (where.empty()) return false;
  if (where.front() == '-')
    return where.find(": ") == std::string::npos && where.find(", byte ") == std::string::npos;
  return std::all_of(where.begin(), where.end(),
                     [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; });
}

}  // namespace

int report(const Context& context, const Error& reported, const ConnectionFlags& flags) {
  Error error = reported;
  error.where = as_typed(error.where, flags);
  std::string hint;
  switch (error.kind) {
    case ErrorKind::connection_failed:
      if (!error.proxy.empty()) {
        hint = "the request went through the proxy " + error.proxy +
               ": is the proxy up, and can it reach the server? List the server's host in "
               "no_proxy to connect directly";
      } else if (const BackendTraits& traits = traits_of(flags.backend); traits.start_command) {
        hint = std::string("is ") + traits.server + " running at " +
               (error.where.empty() ? "that host" : error.where) + "? Start it with `" +
               traits.start_command + "`, or point " + as_typed("base_url", flags) + " at it";
      } else {
        hint = "is the server running and reachable at that address?";
      }
      break;
    case ErrorKind::timeout:
      hint = "a cold model load can take a while: try a larger --timeout";
      break;
    case ErrorKind::authentication:
      // A token file that cannot be used says what to fix in it; the rest is the server's no.
      if (error.where.empty() ||
          (error.where != flags.api_token_file && error.where != flags.gateway.token_file))
        hint = credentials_hint(flags);
      break;
    case ErrorKind::tls:
      hint = "check the server's certificate; clef never turns verification off";
      break;
    case ErrorKind::invalid_input:
      if (about_the_syntax(error.where)) hint = "run the command with --help for the syntax";
      break;
    default:
      break;
  }
  // Where is often a file's name, which may hold a newline: on one line, it cannot start a
  // line that looks like clef's own.
  error.where = terminal_safe_line(error.where);
  print_error(context, error.to_string(), hint);
  return as_int(exit_code_for(error.kind));
}

}  // namespace clef::cli

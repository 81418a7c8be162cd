// The implementation of clef/options.hpp: everything a Client can be told — where to connect, how
// to retry, how strictly to read.
#include "clef/options.hpp"

#include <unistd.h>

#include <cstdlib>

#include "clef/version.hpp"
#include "util/ascii.hpp"
#include "util/base64.hpp"
#include "wire/ai_gateway.hpp"
#include "wire/backend_wire.hpp"
#include "wire/options_check.hpp"
#include "wire/workers_ai.hpp"

namespace clef {
namespace {

/// Timeouts outside [1 ms, 1 day] are refused: 0 would mean "no timeout" to libcurl, and
/// larger values overflow its long on some platforms.
Status check_timeout(std::chrono::milliseconds value, const char* field) {
  if (value >= std::chrono::milliseconds(1) && value <= std::chrono::hours(24)) return {};
  return make_error(ErrorKind::invalid_input,
                    std::string(field) + " must be between 1 ms and 1 day, not " +
                        std::to_string(value.count()) + " ms",
                    field);
}

std::string first_set(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    std::string value = detail::env(name);
    if (!value.empty()) return value;
  }
  return {};
}

}  // namespace

ClientOptions ClientOptions::from_environment(Backend backend) {
  ClientOptions options;
  options.backend = backend;
  // curl's own variable first, then the one Go programs (Ollama's CLI) honour.
  options.ca_file = first_set({"CURL_CA_BUNDLE", "SSL_CERT_FILE"});
  detail::wire_of(backend).read_environment(options);
  return options;
}

namespace detail {

Result<Connection> connection_from(ClientOptions options) {
  auto root = checked_api_root(options);
  if (!root) return root.error();
  Connection connection;
  connection.transport = options.transport ? options.transport : make_curl_transport();
  connection.base_url = std::move(root->url);
  connection.secret = detail::Secrets(root->secret);
  // Basic authentication: a server that echoes the header shows the base64 of user:password,
  // which gives the password back to anyone who decodes it.
  if (root->authorization.rfind("Basic ", 0) == 0) {
    connection.secret.add(std::string_view(root->authorization).substr(6));
    if (auto decoded = detail::base64_decode(std::string_view(root->authorization).substr(6)))
      detail::add_basic_credentials(*decoded, connection.secret);
    // As written in the URL too ("p%40ss"), escapes and all.
    if (!root->userinfo_as_written.empty())
      detail::add_basic_credentials(root->userinfo_as_written, connection.secret);
  }
  connection.authorization = std::move(root->authorization);
  if (through_gateway(options)) connection.secret.add(options.gateway.token);
  connection.gateway_headers = gateway_headers(options);
  connection.options = std::move(options);
  return connection;
}

namespace {

/// The API token as it will be sent and redacted: bare, one line, visible ASCII.
Status check_api_token(const std::string& token) {
  // authentication, not invalid_input: the token cannot be used, however it was given (a token
  // file says so too), and no flag's syntax is at fault.
  if (detail::has_control_characters(token)) {
    return make_error(ErrorKind::authentication,
                      "the API token contains a line break or control character (a stray "
                      "newline from a file?)",
                      "api_token");
  }
  if (detail::trimmed_space(token).size() != token.size()) {
    // Redaction looks for the token as given; a server echoing the bare key would show it.
    return make_error(ErrorKind::authentication,
                      "the API token starts or ends with white space: give the bare token",
                      "api_token");
  }
  if (!detail::is_bare_token(token)) {
    // An HTTP header carries visible ASCII: "Bearer Bearer …" or a pasted byte would only be
    // refused by the server, with a message that does not say why.
    return make_error(ErrorKind::authentication,
                      "the API token has a space or a byte outside visible ASCII in it (a "
                      "'Bearer ' prefix, or a pasted character?): give the bare token",
                      "api_token");
  }
  return {};
}

}  // namespace

Result<ApiRoot> checked_api_root(const ClientOptions& options) {
  if (auto gateway = check_gateway_options(options); !gateway) return gateway.error();
  auto resolved = wire_of(options.backend).base_url(options);
  if (!resolved) return resolved.error();
  // Credentials leave the URL here, before any message can show it.
  const auto credentials = url_credentials(resolved.value());
  std::string base = url_without_credentials(resolved.value());
  while (!base.empty() && base.back() == '/') base.pop_back();
  // HTTP://, Https://: any case, as curl takes it; sent and shown in lower case.
  if (const auto scheme = base.find("://"); scheme != std::string::npos && scheme <= 5)
    base.replace(0, scheme, detail::ascii_lower(std::string_view(base).substr(0, scheme)));
  if (base.rfind("http://", 0) != 0 && base.rfind("https://", 0) != 0) {
    return make_error(ErrorKind::invalid_input,
                      "the base URL must start with http:// or https://: \"" + base + "\"",
                      "base_url");
  }
  if (detail::has_control_characters(base) ||
      (credentials && detail::has_control_characters(credentials->user + credentials->password))) {
    return make_error(ErrorKind::invalid_input, "the base URL contains control characters",
                      "base_url");
  }
  if (credentials && !options.api_token.empty()) {
    return make_error(ErrorKind::invalid_input,
                      "the base URL holds a user and password and an API token is set too: "
                      "give one of them (both would go in the Authorization header)",
                      "base_url");
  }
  if (auto token = check_api_token(options.api_token); !token) return token.error();
  if (auto s = check_timeout(options.connect_timeout, "connect_timeout"); !s) return s.error();
  if (auto s = check_timeout(options.request_timeout, "request_timeout"); !s) return s.error();
  if (!options.ca_file.empty() && ::access(options.ca_file.c_str(), R_OK) != 0) {
    return make_error(ErrorKind::invalid_input,
                      "cannot read the CA bundle \"" + options.ca_file +
                          "\" (from --ca-cert, CURL_CA_BUNDLE or SSL_CERT_FILE)",
                      "ca_file");
  }
  ApiRoot root;
  root.url = std::move(base);
  if (!options.api_token.empty()) {
    root.authorization = "Bearer " + options.api_token;
    root.secret = options.api_token;
  } else if (credentials) {
    root.authorization = "Basic " + base64_encode(credentials->user + ":" + credentials->password);
    root.secret = credentials->password;
    const std::string& url = resolved.value();
    const auto start = url.find("://") == std::string::npos ? 0 : url.find("://") + 3;
    const auto at = url.substr(start, url.find_first_of("/?#", start) - start).rfind('@');
    if (at != std::string::npos) root.userinfo_as_written = url.substr(start, at);
  }
  return root;
}

std::string user_agent() {
  return std::string("clef/") + clef::version;
}

void apply_transfer_options(const ClientOptions& options, HttpRequest& request) {
  request.connect_timeout = options.connect_timeout;
  request.total_timeout = options.request_timeout;
  request.max_response_bytes = options.max_response_bytes;
  request.ca_file = options.ca_file;
  request.proxy = options.proxy;
  request.cancel = options.cancel;
}

}  // namespace detail
}  // namespace clef

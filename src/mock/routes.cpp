// The mock's routes: decisions on both URL forms, Ollama's own API on the Ollama profile, and
// error bodies in the profile's shape for whatever cpp-httplib or a handler cannot answer.
#include "mock/routes.hpp"

#include <exception>
#include <string>

#include "mock/decision_route.hpp"
#include "mock/error_bodies.hpp"
#include "mock/gateway.hpp"
#include "mock/http_stream.hpp"
#include "mock/ollama_api.hpp"
#include "mock/server_state.hpp"

namespace clef::mock_detail {
namespace {

using httplib::Request;
using httplib::Response;

/// Errors cpp-httplib answers itself (a malformed request, a body past the cap) get the
/// profile's error body, as the real server would send, instead of an empty one.
void add_error_bodies(ServerState& state) {
  state.http.set_error_handler(
      httplib::Server::HandlerWithResponse([&state](const Request& req, Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        if (res.status == 404) {
          // No route: Ollama's Go mux answers its plain-text page, the others their error body.
          if (state.profile == MockProfile::ollama) {
            res.set_content("404 page not found", "text/plain; charset=utf-8");
          } else {
            send(res, error_reply(state.profile, 404,
                                  "no route for " + req.method + " " + req.path.substr(0, 200)));
          }
          return httplib::Server::HandlerResponse::Handled;
        }
        if (res.status != 400 && res.status != 413 && res.status != 414)
          return httplib::Server::HandlerResponse::Unhandled;
        // A request that cannot be read leaves bytes that would be read as the next request:
        // the connection closes after this answer, as Go's server closes it, and says so.
        res.set_header("Connection", "close");
        close_after_answer();
        const std::string why = res.status == 400   ? "malformed HTTP request"
                                : res.status == 413 ? "request body must not exceed 64 MiB"
                                                    : "request URI too long";
        send(res, error_reply(state.profile, res.status, why));
        return httplib::Server::HandlerResponse::Handled;
      }));
  // A defect in the mock answers the profile's 500, never an empty body or a dead thread.
  state.http.set_exception_handler(
      [&state](const Request&, Response& res, std::exception_ptr error) {
        std::string what = "unknown error";
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        send(res, error_reply(state.profile, 500, "clef mock failed: " + what));
      });
}

/// Ollama's own API; the other servers have none (a GET there is their 404).
void add_ollama_api(ServerState& state) {
  state.http.Post("/api/show", [&state](const Request& req, Response& res) {
    show_model(*state.settings.snapshot(), req, res);
  });
  state.http.Get("/api/tags", [&state](const Request&, Response& res) {
    list_tags(*state.settings.snapshot(), res);
  });
  state.http.Get("/api/version", [&state](const Request&, Response& res) {
    report_version(*state.settings.snapshot(), res);
  });
}

}  // namespace

void add_routes(ServerState& state) {
  add_error_bodies(state);
  auto decide = [&state](const Request& req, Response& res) { serve_decision(state, req, res); };
  state.http.Post("/v1/systemone", decide);
  state.http.Post(R"(/client/v4/accounts/([^/]+)/ai/run/(.+))", decide);
  if (state.profile == MockProfile::workers_ai) {
    // AI Gateway in front of it: https://gateway.ai.cloudflare.com/v1/ACCOUNT/GATEWAY/workers-ai/…
    state.http.Post(R"(/v1/([^/]+)/([^/]+)/workers-ai/(.+))",
                    [&state](const httplib::Request& req, httplib::Response& res) {
                      serve_gateway(state, req, res);
                    });
  }
  if (state.profile == MockProfile::ollama) add_ollama_api(state);
  if (state.profile == MockProfile::openai) state.http.Post("/v1/decisions", decide);
}

}  // namespace clef::mock_detail

// The implementation of verbose_transport.hpp: --verbose.
#include "flags/verbose_transport.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "clef/backend.hpp"
#include "common/context.hpp"
#include "common/interruptible_stderr.hpp"
#include "common/terminal_text.hpp"

namespace clef::cli {
namespace {

/// One lock for every verbose transport: with several hosts each client has its own, and they
/// all print to the same stream from their own threads.
std::mutex& verbose_output_mutex() {
  static std::mutex mutex;
  return mutex;
}

bool is_credential(const std::string& name) {
  return name == "Authorization" || name == "Proxy-Authorization" || name == "cf-aig-authorization";
}

/// The secrets `request` sends (each credential header's value without its scheme): what a line
/// of -v must never show, even when a server echoes one back.
std::vector<std::string> secrets_of(const HttpRequest& request) {
  std::vector<std::string> secrets;
  for (const auto& [name, sent] : request.headers) {
    if (!is_credential(name)) continue;
    const auto space = sent.find(' ');
    std::string secret = space == std::string::npos ? sent : sent.substr(space + 1);
    if (!secret.empty()) secrets.push_back(std::move(secret));
  }
  return secrets;
}

/// `value` from the server with each of `secrets` replaced.
std::string without_credentials(std::string value, const std::vector<std::string>& secrets) {
  for (const auto& secret : secrets) {
    for (auto at = value.find(secret); at != std::string::npos; at = value.find(secret, at + 10)) {
      value.replace(at, secret.size(), "<redacted>");
    }
  }
  return value;
}

/// "clef: > POST URL (N bytes)" and the headers, credentials shown by their scheme only.
/// Written with appends, not a string stream: -v prints two of these per decision.
std::string request_text(const HttpRequest& request) {
  std::string out = "clef: > " + request.method + " " + request.url + " (" +
                    std::to_string(request.body.size()) + " bytes)\n";
  for (const auto& [name, value] : request.headers) {
    out += "clef: >   " + name + ": ";
    // Only the scheme of a credential is shown ("Bearer", "Basic"), never the value.
    out += is_credential(name) ? value.substr(0, value.find(' ')) + " <redacted>" : value;
    out += '\n';
  }
  if (const auto proxy = proxy_route(request)) {
    out += "clef: >   through the proxy " + url_without_credentials(proxy->url) + " (from " +
           proxy->source + ")\n";
  }
  return out;
}

/// "clef: < HTTP 200, N bytes, 12 ms" with the ids a support ticket needs, or the failure.
std::string response_text(const std::vector<std::string>& secrets,
                          const Result<HttpResponse>& response,
                          std::chrono::steady_clock::time_point started) {
  const std::string ms = std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::steady_clock::now() - started)
                                            .count());
  if (!response) {
    return "clef: < failed after " + ms + " ms: " + response.error().to_string() + "\n";
  }
  std::string back = "clef: < HTTP " + std::to_string(response->status) + ", " +
                     std::to_string(response->body.size()) + " bytes, " + ms + " ms";
  for (const char* name : {"cf-ai-req-id", "cf-aig-cache-status", "cf-aig-log-id"}) {
    const std::string value = response->header(name);
    if (!value.empty()) {
      back += ", ";
      back += name;
      back += " " + terminal_safe(without_credentials(value, secrets));
    }
  }
  return back + "\n";
}

void print(std::ostream& log, const std::string& text) {
  std::lock_guard<std::mutex> lock(verbose_output_mutex());
  log << text << std::flush;
}

class VerboseTransport : public Transport {
 public:
  VerboseTransport(std::shared_ptr<Transport> inner, std::ostream& log)
      : m_inner(std::move(inner)), m_log(log) {}

  Result<HttpResponse> send(const HttpRequest& request) override {
    print(m_log, request_text(request));
    const auto started = std::chrono::steady_clock::now();
    auto response = m_inner->send(request);
    print(m_log, response_text(secrets_of(request), response, started));
    return response;
  }

 private:
  std::shared_ptr<Transport> m_inner;
  std::ostream& m_log;
};

/// Where a loop's -v lines go: to clef's stderr, kept and written once per loop turn (two
/// writes per request were most of what -v cost a batch) as far as stderr takes them without
/// waiting (a stderr nobody reads must not hold the transfers in flight past their timeout), or
/// straight to any other stream.
class VerboseLines {
 public:
  VerboseLines(std::ostream& log, const std::shared_ptr<AsyncTransport>& loop)
      : m_log(log), m_kept(kept_lines_of(log)), m_loop(loop) {}

  void print(const std::string& text) {
    auto loop = m_loop.lock();
    if (!m_kept || !loop) return cli::print(m_log, text);
    m_kept->keep(text);
    // One write per turn: the first line kept asks the loop to write them at its next turn
    // (after(0) runs there before it waits, or as it shuts down); anything written to stderr
    // meanwhile goes after them. The task holds what it writes to, not this or the stream: the
    // loop's thread may run it after main has returned (it then writes nothing).
    if (m_write_asked->exchange(true)) return;
    loop->after(std::chrono::milliseconds(0), [kept = m_kept, asked = m_write_asked](bool) {
      asked->store(false);
      kept->write_kept();
    });
  }

 private:
  std::ostream& m_log;
  std::shared_ptr<KeptLines> m_kept;     ///< Null when `log` is not clef's stderr.
  std::weak_ptr<AsyncTransport> m_loop;  ///< Weak: the loop holds this stage's tasks.
  std::shared_ptr<std::atomic<bool>> m_write_asked = std::make_shared<std::atomic<bool>>(false);
};

/// The same lines from a loop: the request's as it starts, the outcome's on the loop thread.
class VerboseLoop final : public AsyncTransport {
 public:
  VerboseLoop(std::shared_ptr<AsyncTransport> inner, std::ostream& log)
      : m_inner(std::move(inner)), m_lines(std::make_shared<VerboseLines>(log, m_inner)) {}

  void start(HttpRequest request, ResponseHandler done) override {
    m_lines->print(request_text(request));
    const auto started = std::chrono::steady_clock::now();
    // The outcome's line scrubs the request's secrets: those alone are kept for it (none for a
    // server without credentials), not a copy of the request.
    std::vector<std::string> secrets = secrets_of(request);
    m_inner->start(std::move(request),
                   [lines = m_lines, secrets = std::move(secrets), started,
                    done = std::move(done)](Result<HttpResponse> response) mutable {
                     lines->print(response_text(secrets, response, started));
                     done(std::move(response));
                   });
  }
  void after(std::chrono::milliseconds delay,
             std::function<void(bool shutting_down)> task) override {
    m_inner->after(delay, std::move(task));
  }
  bool running_here() const override { return m_inner->running_here(); }

 private:
  std::shared_ptr<AsyncTransport> m_inner;
  std::shared_ptr<VerboseLines> m_lines;
};

}  // namespace

std::shared_ptr<Transport> make_verbose_transport(std::shared_ptr<Transport> inner,
                                                  std::ostream& log) {
  return std::make_shared<VerboseTransport>(std::move(inner), log);
}

std::shared_ptr<AsyncTransport> make_verbose_transport(std::shared_ptr<AsyncTransport> inner,
                                                       std::ostream& log) {
  return std::make_shared<VerboseLoop>(std::move(inner), log);
}

}  // namespace clef::cli

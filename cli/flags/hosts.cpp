// The implementation of hosts.hpp: several servers for one batch.
#include "flags/hosts.hpp"

#include <algorithm>
#include <cctype>
#include <future>
#include <iostream>
#include <map>

#include "clef/cache.hpp"
#include "common/files.hpp"
#include "common/terminal_text.hpp"

namespace clef::cli {
namespace {

constexpr std::size_t kMostHosts = 256;

std::string trimmed(const std::string& line) {
  const auto first = line.find_first_not_of(" \t\r");
  if (first == std::string::npos) return std::string();
  return line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
}

Status add_hosts_from_file(const std::string& path, std::vector<std::string>& hosts) {
  auto text = read_file(path, "the hosts file", std::cin, 1024u * 1024u);
  if (!text) return text.error();
  std::size_t listed = 0, line_number = 0;
  // A UTF-8 byte order mark (an editor's) is not part of the first host.
  std::size_t start = text->rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  const std::string& all = text.value();
  while (start < all.size()) {
    std::size_t end = all.find('\n', start);
    if (end == std::string::npos) end = all.size();
    ++line_number;
    const std::string host = trimmed(all.substr(start, end - start));
    start = end + 1;
    if (host.empty() || host.front() == '#') continue;
    if (host.find_first_of(" \t") != std::string::npos) {
      return make_error(ErrorKind::invalid_input, "one base URL a line, without spaces",
                        path + ":" + std::to_string(line_number));
    }
    if (auto valid = check_host_value(host, path + ":" + std::to_string(line_number)); !valid)
      return valid;
    hosts.push_back(host);
    ++listed;
  }
  if (listed == 0)
    return make_error(ErrorKind::invalid_input, "the hosts file lists no host", path);
  return {};
}

/// How long the fleet check waits for one host's /api/tags: a host that takes longer is
/// checked no further (it is only warned about), not waited on for the whole --timeout.
constexpr std::chrono::seconds kCheckTimeout{10};
/// How long the run record's lookup of the model's version waits: it only informs, so a host
/// slow to list its models delays the run's start by this much at most.
constexpr std::chrono::seconds kVersionTimeout{2};

/// Each host's version of the model, all asked at once; the first SIGINT stops the asking.
std::vector<Result<ModelVersion>> versions_of(const std::string& model,
                                              const std::vector<Client>& clients,
                                              const Context& context,
                                              std::chrono::milliseconds timeout = kCheckTimeout) {
  std::vector<std::future<Result<ModelVersion>>> asked;
  for (const Client& client : clients) {
    ClientOptions options = client.options();
    options.request_timeout = std::min<std::chrono::milliseconds>(options.request_timeout, timeout);
    options.connect_timeout = std::min<std::chrono::milliseconds>(options.connect_timeout, timeout);
    options.retry.max_attempts = 1;
    if (context.stop) options.cancel = context.stop;
    // Hosts are asked side by side; one host, on this thread (a thread would only cost one).
    asked.push_back(std::async(clients.size() > 1 ? std::launch::async : std::launch::deferred,
                               [options, model] { return resolve_model_version(options, model); }));
  }
  std::vector<Result<ModelVersion>> versions;
  for (auto& answer : asked) versions.push_back(answer.get());
  return versions;
}

/// The same model everywhere: each reachable Ollama host's digest of it.
Status check_fleet(const ConnectionFlags& flags, const std::vector<Client>& clients,
                   const Context& context) {
  const std::vector<Result<ModelVersion>> versions = versions_of(flags.model, clients, context);
  std::string first_version, first_host;
  for (std::size_t i = 0; i < clients.size(); ++i) {
    const std::string host = url_without_credentials(clients[i].options().base_url);
    const Result<ModelVersion>& version = versions[i];
    if (!version && version.error().kind == ErrorKind::cancelled) return version.error();
    if (!version && (version.error().kind == ErrorKind::connection_failed ||
                     version.error().kind == ErrorKind::timeout)) {
      context.err << "clef: warning: cannot check " << terminal_safe(host)
                  << " now; it gets work like the others and is set aside if it keeps failing: "
                  << terminal_safe(version.error().message) << "\n";
      continue;
    }
    if (!version) {
      Error error = version.error();
      error.message += "; every host must serve the model (--mixed-fleet sends anyway)";
      return error;
    }
    if (first_version.empty()) {
      first_version = version->version;
      first_host = host;
    } else if (version->version != first_version) {
      return make_error(ErrorKind::invalid_input,
                        "the hosts serve different models: " + first_host + " has " +
                            terminal_safe(first_version) + ", " + host + " has " +
                            terminal_safe(version->version) +
                            " (--mixed-fleet sends to them anyway)",
                        "--host");
    }
  }
  return {};
}

/// No server twice, however its URL is written: the case of its scheme and name, a default
/// port, an address's form (127.1, [0:0:0:0:0:0:0:1]), a trailing slash, another user.
Status check_distinct(const std::vector<Client>& clients) {
  std::map<std::string, std::string> seen;  // server → the URL that named it first
  for (const Client& client : clients) {
    const std::string url = url_without_credentials(client.options().base_url);
    const auto [first, fresh] = seen.emplace(server_identity(client.options().base_url), url);
    if (!fresh) {
      const std::string same = first->second == url
                                   ? terminal_safe(url)
                                   : terminal_safe(first->second) + " and " + terminal_safe(url) +
                                         " are one server, " + first->first;
      return make_error(ErrorKind::invalid_input, "host given twice: " + same, "--host/--hosts");
    }
  }
  return {};
}

}  // namespace

// Ollama's own OLLAMA_HOST parser quietly falls back to 127.0.0.1:11434 on what it cannot
// read; a flag that names a server must not (clef::check_server_url).
Status check_host_value(const std::string& value, const std::string& where) {
  auto valid = check_server_url(value);
  if (valid) return {};
  return make_error(ErrorKind::invalid_input,
                    "cannot read the host " + terminal_safe(url_without_credentials(value)) +
                        " as written: " + valid.error().message,
                    where);
}

void add_hosts_flags(CLI::App& command, ConnectionFlags& flags) {
  command.add_option("--hosts", flags.hosts_file,
                     "Also send to the servers listed in FILE (one base URL a line, # comments)");
  command.add_flag("--mixed-fleet", flags.mixed_fleet,
                   "Send to several Ollama hosts even when their digests of the model differ");
}

Result<std::vector<std::string>> all_hosts(const ConnectionFlags& flags) {
  std::vector<std::string> hosts = flags.hosts;
  if (!flags.hosts_file.empty()) {
    if (auto added = add_hosts_from_file(flags.hosts_file, hosts); !added) return added.error();
  }
  if (hosts.size() > kMostHosts) {
    return make_error(
        ErrorKind::invalid_input,
        std::to_string(hosts.size()) + " hosts: at most " + std::to_string(kMostHosts),
        "--host/--hosts");
  }
  for (const std::string& host : flags.hosts) {
    if (auto valid = check_host_value(host, "--host"); !valid) return valid.error();
  }
  return hosts;
}

Result<std::vector<Client>> make_clients(const ConnectionFlags& flags, const Context& context,
                                         std::shared_ptr<DrivenCurlLoop> driven) {
  auto hosts = all_hosts(flags);
  if (!hosts) return hosts.error();
  if (hosts->size() > 1 && (!flags.record.empty() || !flags.replay.empty())) {
    return make_error(ErrorKind::invalid_input,
                      "--record and --replay take one host (a cassette is one server's answers)",
                      flags.record.empty() ? "--replay" : "--record");
  }
  std::vector<Client> clients;
  // One event loop sends to every host: its thread and its connection pool serve them all. A
  // replay sends nothing: its cassette brings a loop of its own (and takes one host), unless the
  // caller turns one.
  std::shared_ptr<AsyncTransport> network = driven;
  if (!network && flags.replay.empty()) network = make_curl_loop();
  ConnectionFlags one = flags;
  one.hosts_file.clear();
  for (std::size_t i = 0; i < std::max<std::size_t>(hosts->size(), 1); ++i) {
    one.hosts = hosts->empty() ? std::vector<std::string>{} : std::vector{(*hosts)[i]};
    auto client = make_one_client(one, context, false, network);
    if (!client) return client.error();
    clients.push_back(std::move(client).value());
  }
  if (auto distinct = check_distinct(clients); !distinct) return distinct.error();
  if (clients.size() > 1 && traits_of(flags.backend).tagged_models && !flags.mixed_fleet) {
    if (auto same = check_fleet(flags, clients, context); !same) return same.error();
  }
  return clients;
}

std::string served_model_version(const ConnectionFlags& flags, const std::vector<Client>& clients,
                                 const Context& context) {
  if (!traits_of(flags.backend).tagged_models || !flags.replay.empty()) return "";
  std::vector<std::string> distinct;
  for (const Result<ModelVersion>& version :
       versions_of(flags.model, clients, context, kVersionTimeout)) {
    // A name and a digest: anything longer or with control characters is not one.
    const bool plain = version && version->version.size() <= 512 &&
                       std::none_of(version->version.begin(), version->version.end(),
                                    [](unsigned char c) { return c < 0x20 || c == 0x7f; });
    if (plain && std::find(distinct.begin(), distinct.end(), version->version) == distinct.end())
      distinct.push_back(version->version);
  }
  std::string joined;
  for (const auto& version : distinct) joined += (joined.empty() ? "" : ", ") + version;
  return joined;
}

}  // namespace clef::cli

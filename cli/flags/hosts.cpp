// The implementation of hosts.hpp: several servers for one batch.
#include "flags/hosts.hpp"

#include <iostream>
#include <set>

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
  std::size_t start = 0;
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
    hosts.push_back(host);
    ++listed;
  }
  if (listed == 0)
    return make_error(ErrorKind::invalid_input, "the hosts file lists no host", path);
  return {};
}

/// The same model everywhere: each reachable Ollama host's digest of it.
Status check_fleet(const ConnectionFlags& flags, const std::vector<Client>& clients,
                   const Context& context) {
  std::string first_version, first_host;
  for (const Client& client : clients) {
    const std::string& host = client.options().base_url;
    auto version = resolve_model_version(client.options(), flags.model);
    if (!version && (version.error().kind == ErrorKind::connection_failed ||
                     version.error().kind == ErrorKind::timeout)) {
      context.err << "clef: warning: cannot check " << terminal_safe(host)
                  << " now (it is set aside and tried again during the run): "
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
                            first_version + ", " + host + " has " + version->version +
                            " (--mixed-fleet sends to them anyway)",
                        "--host");
    }
  }
  return {};
}

}  // namespace

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
        std::to_string(hosts.size()) + " hosts: at most " + std::to_string(kMostHosts), "--host");
  }
  std::set<std::string> seen;
  for (const std::string& host : hosts) {
    if (!seen.insert(host).second)
      return make_error(ErrorKind::invalid_input, "host given twice: " + host, "--host");
  }
  return hosts;
}

Result<std::vector<Client>> make_clients(const ConnectionFlags& flags, const Context& context,
                                         std::size_t in_flight) {
  auto hosts = all_hosts(flags);
  if (!hosts) return hosts.error();
  if (hosts->size() > 1 && (!flags.record.empty() || !flags.replay.empty())) {
    return make_error(ErrorKind::invalid_input,
                      "--record and --replay take one host (a cassette is one server's answers)",
                      flags.record.empty() ? "--replay" : "--record");
  }
  std::vector<Client> clients;
  ConnectionFlags one = flags;
  one.hosts_file.clear();
  for (std::size_t i = 0; i < std::max<std::size_t>(hosts->size(), 1); ++i) {
    one.hosts = hosts->empty() ? std::vector<std::string>{} : std::vector{(*hosts)[i]};
    auto client = make_one_client(one, context, false, in_flight);
    if (!client) return client.error();
    clients.push_back(std::move(client).value());
  }
  if (clients.size() > 1 && flags.backend == Backend::ollama && !flags.mixed_fleet) {
    if (auto same = check_fleet(flags, clients, context); !same) return same.error();
  }
  return clients;
}

}  // namespace clef::cli

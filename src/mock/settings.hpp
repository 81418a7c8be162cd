// Internal: what tests and flags may change while the mock runs — models, version, script,
// rules, faults, cassette, digests, token — replaced whole and read through consistent snapshots.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "clef/mock.hpp"
#include "clef/transport.hpp"

namespace clef::mock_detail {

struct MockSettings {
  std::vector<std::string> models = {"clef-flash", "clef-flash:latest"};
  std::vector<std::string> other_models = {"llama3:latest"};  // pulled, not decision-capable
  std::string version = "0.35.1";
  std::function<std::optional<MockReply>(const MockRequest&, int)> script;
  std::vector<MockRule> rules;
  MockFaults faults;
  std::shared_ptr<Transport> cassette;
  std::map<std::string, std::string> digests;  ///< /api/tags digests set by a test
  /// Workers AI's Bearer token: any non-empty one when unset (see authorized()).
  std::optional<std::string> token;
  /// The one AI Gateway the account has (workers-ai); another name gets the gateway's 2001.
  std::string gateway = "default";
  /// An Authenticated Gateway's token: unset, the gateway takes requests without one.
  std::optional<std::string> gateway_token;
};

/// The settings, replaced whole under a mutex and read through a snapshot: a request sees one
/// consistent set, and never a vector that a setter is replacing under it.
class SettingsStore {
 public:
  std::shared_ptr<const MockSettings> snapshot() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_settings;
  }
  /// Applies `apply` to a copy of the settings, then publishes the copy.
  void change(const std::function<void(MockSettings&)>& apply) {
    std::lock_guard<std::mutex> lock(m_mutex);
    auto next = std::make_shared<MockSettings>(*m_settings);
    apply(*next);
    m_settings = std::move(next);
  }

 private:
  mutable std::mutex m_mutex;
  std::shared_ptr<const MockSettings> m_settings = std::make_shared<MockSettings>();
};

/// Whether `shape` serves decisions from `name` (see same_model).
bool serves(const MockSettings& s, MockProfile shape, const std::string& name);
/// Whether `name` is pulled on `shape` but cannot decide (Ollama's chat models).
bool is_other_model(const MockSettings& s, MockProfile shape, const std::string& name);

}  // namespace clef::mock_detail

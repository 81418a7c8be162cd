// The implementation of model_match.hpp: the model that answered against the one asked for.
#include "wire/model_match.hpp"

#include <string>

#include "util/ascii.hpp"

namespace clef::detail {
namespace {

struct ModelName {
  std::string name;  ///< Lower case, without any path before it.
  std::string tag;   ///< After ':'; "" for none.
};

ModelName read_name(std::string_view text) {
  std::string lower = ascii_lower(text);
  if (const auto slash = lower.rfind('/'); slash != std::string::npos) lower.erase(0, slash + 1);
  ModelName out;
  const auto colon = lower.rfind(':');
  out.name = lower.substr(0, colon);
  if (colon != std::string::npos) out.tag = lower.substr(colon + 1);
  return out;
}

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// jev-latest, jev-preview, jev: the family "jev" answered by jev-1.13.0 and the like.
bool is_version_of(const std::string& alias, const std::string& reported) {
  std::string family = alias;
  for (std::string_view suffix : {"-latest", "-preview"}) {
    if (ends_with(family, suffix)) family.resize(family.size() - suffix.size());
  }
  return reported.size() > family.size() + 1 && reported.compare(0, family.size(), family) == 0 &&
         reported[family.size()] == '-' && reported[family.size() + 1] >= '0' &&
         reported[family.size() + 1] <= '9';
}

/// `name` for a message: its first 200 bytes (on a character's boundary) and "…" when longer.
/// A server's model name is copied into every answer's problem, and a name of 16 MB copied into
/// 64 of them was a gigabyte.
std::string name_for_message(std::string_view name) {
  constexpr std::size_t most = 200;
  if (name.size() <= most) return std::string(name);
  std::size_t cut = most;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
  return std::string(name.substr(0, cut)) + "…";
}

}  // namespace

bool same_model(std::string_view asked, std::string_view reported, bool tags_name_models) {
  if (asked.empty() || reported.empty() || asked == reported) return true;
  const ModelName a = read_name(asked), r = read_name(reported);
  if (a.name == r.name) {
    const std::string asked_tag = a.tag.empty() ? "latest" : a.tag;
    const std::string reported_tag = r.tag.empty() ? "latest" : r.tag;
    if (tags_name_models) return asked_tag == reported_tag;
    return a.tag == r.tag || a.tag.empty() || r.tag.empty() || asked_tag == reported_tag;
  }
  return a.tag.empty() && is_version_of(a.name, r.name);
}

void mark_other_model(Decision& decision, std::string_view asked, bool tags_name_models) {
  if (same_model(asked, decision.model, tags_name_models)) return;
  const std::string problem = "answered by the model \"" + name_for_message(decision.model) +
                              "\", not \"" + name_for_message(asked) + "\" as asked";
  for (auto& answer : decision.answers) {
    answer.status = AnswerStatus::invalid;
    answer.problem = problem;
    answer.value = std::monostate{};
    answer.renormalized = false;
    answer.threshold.reset();
  }
}

}  // namespace clef::detail

// The checks each imitated server makes on a decision request: Workers AI's token, and the
// first problem in a decision body.
#include "mock/checks.hpp"

#include <algorithm>
#include <set>

#include "mock/attachment_checks.hpp"

namespace clef::mock_detail {
namespace {

std::string type_name(const Json& value) {
  return value.is_null() ? "null" : value.type_name();
}

/// The most options a choice may have on this server (protocol.md): 0 for none the mock knows
/// (llama.cpp's and OpenAI's are per model).
std::size_t most_options(MockProfile shape) {
  switch (shape) {
    case MockProfile::ollama:
      return 26;  // the Nimble/Tev encoder
    case MockProfile::laya:
      return 100;
    case MockProfile::workers_ai:
    case MockProfile::typesafe:
    case MockProfile::ollaya:
      return 255;
    default:
      return 0;
  }
}

/// A choice's criteria: enough options, not too many for the server, each described by a string
/// or null (or, where instructions may be structured, an object or an array).
std::string check_choice(MockProfile shape, const std::string& at, const Json* criteria,
                         bool structured_ok) {
  if (!criteria || !criteria->is_object() || criteria->size() < 2) {
    return at + ".criteria: a choice needs at least 2 options";
  }
  const std::size_t most = most_options(shape);
  if (most > 0 && criteria->size() > most) {
    return at + ".criteria: at most " + std::to_string(most) + " options";
  }
  for (const auto& option : criteria->items()) {
    const Json& description = option.value();
    const bool structured = description.is_object() || description.is_array();
    if (!description.is_string() && !description.is_null() && !(structured_ok && structured)) {
      return at + ".criteria." + option.key() + ": must be a string or null, not " +
             type_name(description);
    }
  }
  return {};
}

/// Workers AI's rule for a question's name, the strictest seen: [A-Za-z0-9_.-]{1,100}.
bool workers_name(const std::string& name) {
  if (name.empty() || name.size() > 100) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
  });
}

std::string check_question(MockProfile shape, const std::string& at, const Json& q) {
  if (!q.is_object()) return at + ": must be an object, not " + type_name(q);
  // No question has other fields (no weight, prior or threshold on the wire).
  for (const auto& field : q.items()) {
    if (field.key() != "type" && field.key() != "instructions" && field.key() != "criteria")
      return at + "." + field.key() + ": unknown field";
  }
  const Json* type = member(q, "type");
  if (!type || !type->is_string()) {
    return at + ".type: must be a string (choice, noul, score" +
           (shape == MockProfile::typesafe ? ", box)" : ")") +
           (type ? ", not " + type_name(*type) : std::string());
  }
  // Workers AI, Ollama's Clef models and TypeSafe read structured (object or array)
  // instructions and descriptions; the others are only documented with strings.
  const bool structured_ok = shape == MockProfile::ollama || shape == MockProfile::workers_ai ||
                             shape == MockProfile::typesafe;
  const Json* instructions = member(q, "instructions");
  const bool structured = instructions && (instructions->is_object() || instructions->is_array());
  if (!instructions || !(instructions->is_string() || (structured_ok && structured)) ||
      instructions->empty() ||
      (instructions->is_string() && instructions->get_ref<const std::string&>().empty())) {
    return at + ".instructions: must be a non-empty string";
  }
  const std::string& kind = type->get_ref<const std::string&>();
  const Json* criteria = member(q, "criteria");
  if (kind == "choice") {
    if (auto problem = check_choice(shape, at, criteria, structured_ok); !problem.empty())
      return problem;
  } else if (kind == "noul") {
    if (criteria) {
      if (!criteria->is_object()) return at + ".criteria: must be an object";
      for (const auto& item : criteria->items()) {
        if (item.key() != "true" && item.key() != "false") {
          return at + ".criteria: unknown key \"" + item.key() + "\"";
        }
      }
    }
  } else if (kind == "score") {
    const std::size_t max = shape == MockProfile::ollama ? 26 : 10;
    if (!criteria || !criteria->is_array() || criteria->size() < 2 || criteria->size() > max) {
      return at + ".criteria: a score needs 2 to " + std::to_string(max) + " levels";
    }
    // Workers AI's schema: "ordered level descriptions (string, object, or array)".
    for (std::size_t i = 0; i < criteria->size(); ++i) {
      const Json& level = (*criteria)[i];
      const bool structured_level = level.is_object() || level.is_array();
      if (!level.is_string() && !(structured_ok && structured_level)) {
        return at + ".criteria[" + std::to_string(i) + "]: must be a string" +
               (structured_ok ? ", an object or an array" : "");
      }
    }
  } else if (kind == "box" && shape == MockProfile::typesafe) {
    if (criteria) return at + ".criteria: a box question takes no criteria";
  } else {
    return at + ".type: unknown question type \"" + kind + "\"";
  }
  return {};
}

}  // namespace

const Json* member(const Json& object, const std::string& key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

bool authorized(const std::string& authorization, const std::optional<std::string>& token) {
  const std::string scheme = "Bearer ";
  if (authorization.compare(0, scheme.size(), scheme) != 0) return false;
  const std::string given = authorization.substr(scheme.size());
  if (token) return given == *token;
  return given.find_first_not_of(" \t") != std::string::npos;
}

std::string check_body(MockProfile shape, const Json& body) {
  if (!body.is_object()) return "request body must be a JSON object";
  static const std::set<std::string> known = {"model", "state", "questions", "images",
                                              "keep_alive"};
  if (shape == MockProfile::ollama) {
    for (const auto& item : body.items()) {
      if (!known.count(item.key())) return "json: unknown field \"" + item.key() + "\"";
    }
    const Json* keep_alive = member(body, "keep_alive");
    if (keep_alive && keep_alive->is_string()) {
      const std::string& k = keep_alive->get_ref<const std::string&>();
      if (!k.empty() && k.find_first_not_of("-0123456789") == std::string::npos) {
        return "time: missing unit in duration \"" + k + "\"";
      }
    } else if (keep_alive && !keep_alive->is_number() && !keep_alive->is_null()) {
      return "keep_alive: must be a duration string or a number of seconds, not " +
             type_name(*keep_alive);
    }
  }
  const Json* model = member(body, "model");
  if (model && !model->is_string()) return "model: must be a string, not " + type_name(*model);
  const Json* state = member(body, "state");
  if (!state || state->is_null()) return "state: Field required";
  const Json* questions = member(body, "questions");
  if (!questions || !questions->is_object() || questions->empty() || questions->size() > 64) {
    return "questions: must hold 1 to 64 questions";
  }
  for (const auto& item : questions->items()) {
    if (shape == MockProfile::workers_ai && !workers_name(item.key()))
      return "questions." + item.key() + ": a name is 1 to 100 of A-Z, a-z, 0-9, '_', '.', '-'";
    if (auto problem = check_question(shape, "questions." + item.key(), item.value());
        !problem.empty()) {
      return problem;
    }
  }
  return check_attachments(shape, body);
}

}  // namespace clef::mock_detail

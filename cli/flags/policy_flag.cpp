// The implementation of policy_flag.hpp: --policy FILE for ask and batch.
#include "flags/policy_flag.hpp"

#include "common/files.hpp"
#include "common/terminal_text.hpp"

namespace clef::cli {

Result<std::optional<Policy>> load_policy(const std::string& path,
                                          const std::vector<Question>& questions,
                                          const std::string& model, const Context& context) {
  if (path.empty()) return std::optional<Policy>();
  auto text = read_file(path, "the policy", context.in);
  if (!text) return text.error();
  auto policy = Policy::parse(text.value(), path);
  if (!policy) return policy.error();
  if (auto status = policy->check(questions, model); !status) {
    Error error = status.error();
    error.where = path + (error.where.rfind("policy: ", 0) == 0 ? error.where.substr(6) : "");
    return error;
  }
  for (const auto& name : policy->uncovered(questions)) {
    context.err << "clef: policy: " << terminal_safe(path) << " has no threshold for "
                << terminal_safe(name) << ": its answers are never abstained\n";
  }
  return std::optional<Policy>(std::move(policy).value());
}

}  // namespace clef::cli

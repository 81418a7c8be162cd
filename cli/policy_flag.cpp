#include "policy_flag.hpp"

#include "files.hpp"

namespace clef::cli {

Result<std::optional<Policy>> load_policy(const std::string& path,
                                          const std::vector<Question>& questions,
                                          const std::string& model, std::istream& in) {
  if (path.empty()) return std::optional<Policy>();
  auto text = read_file(path, "the policy", in);
  if (!text) return text.error();
  auto policy = Policy::parse(text.value(), path);
  if (!policy) return policy.error();
  auto digest = questions_sha256(questions);
  if (!digest) return digest.error();
  if (auto status = policy->check(digest.value(), model); !status) {
    Error error = status.error();
    error.where = path;
    return error;
  }
  return std::optional<Policy>(std::move(policy).value());
}

}  // namespace clef::cli

#include "context.hpp"

namespace clef::cli {

void print_error(const Context& context, const std::string& message, const std::string& hint) {
  context.err << "clef: error: " << message << "\n";
  if (!hint.empty()) context.err << "clef: " << hint << "\n";
}

}  // namespace clef::cli

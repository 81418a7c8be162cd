// Any other System One server as a backend (TypeSafe's among them): a base URL it must be
// given, CLEF_API_KEY, and TypeSafe's assets form with its box questions.
#include "wire/backend_wire.hpp"

namespace clef::detail {
namespace {

class SystemOneWire final : public BackendWire {
 public:
  const BackendTraits& traits() const override {
    static const BackendTraits traits = [] {
      BackendTraits t;
      t.server = "the System One server";
      t.token_variable = "CLEF_API_KEY";
      return t;
    }();
    return traits;
  }

  Result<std::string> base_url(const ClientOptions& options) const override {
    if (options.base_url.empty()) {
      return make_error(ErrorKind::invalid_input,
                        "a System One server needs a base URL (e.g. http://localhost:8000)",
                        "base_url");
    }
    return options.base_url;
  }

  const char* form_without_boxes() const override { return nullptr; }
  bool takes_assets_form() const override { return true; }
};

}  // namespace

const BackendWire& systemone_wire() {
  static const SystemOneWire wire;
  return wire;
}

}  // namespace clef::detail

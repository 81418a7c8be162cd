// Internal: TypeSafe's form for images and its Box question — images in an `assets` map under
// references the request's text names, and the TypeSafe-Danger-Zone-Images header. Checked
// before anything is sent, each refusal naming its limit.
#pragma once

#include <string>

#include "clef/backend.hpp"
#include "clef/request.hpp"
#include "clef/transport.hpp"

namespace clef::detail {

/// True when `request` goes in TypeSafe's form: on the systemone backend, for a Jev model
/// ("jev-1.14.0", "typesafe/jev-1.14"), a request with a box question, or one that names its
/// image references.
bool sends_assets(const DecisionRequest& request, Backend backend, const std::string& model);

/// sends_assets' test of the request and model alone, for a backend that takes the form.
bool in_assets_form(const DecisionRequest& request, const std::string& model);

/// The reference of images[i] in the assets map: the request's own, else "image_1", "image_2"…
std::string image_reference(const DecisionRequest& request, std::size_t i);

/// Box questions only where the wire has them (TypeSafe's form), with an image to look in; in
/// TypeSafe's form, each image PNG or JPEG of 280 to 1568 pixels a side and at most 16 MiB, and
/// each reference well formed, used once, and written somewhere in the state or the questions.
Status check_typesafe_form(const DecisionRequest& request, Backend backend,
                           const std::string& model);

/// `,"assets":{"image_1":{"type":"image","format":"png","data_base64":"…"}}`.
void append_assets(std::string& out, const DecisionRequest& request);

/// The body cap in TypeSafe's form: 32 MiB.
Status check_typesafe_body_size(std::size_t body_bytes);

/// TypeSafe-Danger-Zone-Images: true, for a request in TypeSafe's form that carries an image or
/// a box question, and for no other.
void add_typesafe_headers(Headers& headers, const DecisionRequest& request, Backend backend,
                          const std::string& model);

}  // namespace clef::detail

// Internal: Ollama's own API as the Ollama profile serves it — /api/show, /api/tags and
// /api/version — and the versions too old for System One.
#pragma once

#include <string>

#include <httplib.h>

#include "mock/settings.hpp"

namespace clef::mock_detail {

/// POST /api/show: a served model's capabilities and format; 404 for one not pulled.
void show_model(const MockSettings& s, const httplib::Request& req, httplib::Response& res);

/// GET /api/tags: every model under its full name (NAME:TAG), once, with its digest.
void list_tags(const MockSettings& s, httplib::Response& res);

/// GET /api/version.
void report_version(const MockSettings& s, httplib::Response& res);

/// Whether an Ollama of `version` predates System One (0.35.1): it answers /v1/systemone with
/// Go's plain-text 404.
bool too_old_for_system_one(const std::string& version);

}  // namespace clef::mock_detail

// KILN_LOG=jit: one line on stderr per compile, kernel and schedule cache
// hit or miss (with why it missed) and evaluation (with why it ran).
#pragma once

#include <functional>
#include <string>

namespace kiln::jit {

// Whether KILN_LOG names "jit" (read once), or set_jit_log turned it on.
bool jit_log_enabled();
// Writes "[kiln jit] <line>" to stderr, or hands the line to the sink.
void jit_log(const std::string& line);
// For tests: turn logging on or off and send lines to `sink` (null: stderr).
void set_jit_log(bool enabled, std::function<void(const std::string&)> sink = nullptr);

}  // namespace kiln::jit

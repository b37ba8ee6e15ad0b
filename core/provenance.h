// The source location graph nodes are stamped with. A public op opens a
// LocScope with its caller's location; only the outermost scope counts, so an
// op built from other ops (softmax from exp and sum, a gradient rule from
// kiln ops) stamps every node it creates with the user's line, not kiln's.
#pragma once

#include "kiln/source_location.h"

namespace kiln {

namespace detail {
struct LocState {
  SourceLoc loc;
  bool set = false;
};
inline thread_local LocState tls_loc;
}  // namespace detail

// The location new nodes get (an empty location outside any public op).
inline SourceLoc current_loc() { return detail::tls_loc.loc; }

// Selects LocScope's forcing constructor.
struct ForceLoc {};
inline constexpr ForceLoc kForceLoc{};

class LocScope {
 public:
  // An unknown location (a node made outside any public op) opens nothing.
  explicit LocScope(const SourceLoc& loc) : owner_(!detail::tls_loc.set && loc.known()) {
    if (owner_) {
      detail::tls_loc.loc = loc;
      detail::tls_loc.set = true;
    }
  }
  // Forces `loc` for the scope's duration, even inside another scope (the
  // backward engine stamps a rule's nodes with its forward op's location).
  LocScope(const SourceLoc& loc, ForceLoc) : owner_(true), saved_(detail::tls_loc) {
    detail::tls_loc.loc = loc;
    detail::tls_loc.set = true;
  }
  ~LocScope() {
    if (owner_) detail::tls_loc = saved_;
  }
  LocScope(const LocScope&) = delete;
  LocScope& operator=(const LocScope&) = delete;

 private:
  bool owner_;
  detail::LocState saved_{};
};

}  // namespace kiln

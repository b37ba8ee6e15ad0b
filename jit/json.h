// A small, strict JSON reader and the writing helpers kiln's dumps use
// (RFC 8259; no extensions). The reader is for untrusted input (graphs given
// to tools/kiln-dump): it enforces limits on size, nesting, string length and
// value count, so hostile input ends in a kiln::Error, never in a crash or a
// huge allocation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::jit::json {

enum class Kind : uint8_t { Null, Bool, Int, Real, String, Array, Object };

struct Member;  // an object's key and value (below: Value is incomplete here)

struct Value {
  Kind kind = Kind::Null;
  bool boolean = false;
  int64_t integer = 0;  // Kind::Int: a number without fraction or exponent that fits int64
  double real = 0.0;    // Kind::Real, and Kind::Int as a double
  std::string string;
  std::vector<Value> items;                            // Array
  // Object members in file order. Not std::pair<std::string, Value>: clang
  // with libstdc++ checks pair's constructors while Value is incomplete.
  std::vector<Member> members;
  const Value* find(std::string_view key) const;  // Object member or nullptr
};

struct Member {
  std::string first;
  Value second;
};

struct Limits {
  size_t max_bytes = size_t{64} << 20;
  int max_depth = 64;
  size_t max_string = size_t{1} << 20;
  size_t max_values = size_t{1} << 19;  // every value counted, nested ones included
};

// Parses exactly one JSON value (whitespace around it allowed). Raises
// kiln::Error "[json] <what> at line L, column C" on malformed input or when
// a limit is exceeded.
Value parse(std::string_view text, const Limits& limits = {});

// Writing: a quoted, escaped string; a number that reads back exactly
// (non-finite values as the strings "nan", "inf", "-inf").
std::string quote(std::string_view s);
std::string number(double v);

}  // namespace kiln::jit::json

// The strict JSON reader (recursive descent, depth-limited) and the writing
// helpers; see json.h.
#include "jit/json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "kiln/error.h"

namespace kiln::jit::json {

const Value* Value::find(std::string_view key) const {
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

namespace {

class Parser {
 public:
  Parser(std::string_view text, const Limits& limits) : s_(text), lim_(limits) {}

  Value document() {
    if (s_.size() > lim_.max_bytes)
      fail("input of " + std::to_string(s_.size()) + " bytes is over the limit of " +
           std::to_string(lim_.max_bytes));
    Value v = value(0);
    ws();
    if (pos_ != s_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    KILN_FAIL("json", what, " at line ", line, ", column ", col);
  }

  void ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool eat(char c) {
    ws();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c, const char* where) {
    if (!eat(c)) fail(std::string("expected '") + c + "' " + where + (pos_ >= s_.size() ? " (input ends)" : ""));
  }
  void count() {
    if (++values_ > lim_.max_values) fail("more than " + std::to_string(lim_.max_values) + " values");
  }

  Value value(int depth) {
    ws();
    if (pos_ >= s_.size()) fail("expected a value (input ends)");
    count();
    const char c = s_[pos_];
    if (c == '{' || c == '[') {
      if (depth >= lim_.max_depth) fail("nesting deeper than " + std::to_string(lim_.max_depth) + " levels");
      return c == '{' ? object(depth + 1) : array(depth + 1);
    }
    Value v;
    if (c == '"') {
      v.kind = Kind::String;
      v.string = string();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v = num();
    } else if (word("true")) {
      v.kind = Kind::Bool;
      v.boolean = true;
    } else if (word("false")) {
      v.kind = Kind::Bool;
    } else if (word("null")) {
      v.kind = Kind::Null;
    } else {
      fail(std::string("unexpected character '") + (c >= 32 && c < 127 ? std::string(1, c) : "?") + "'");
    }
    return v;
  }

  bool word(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }

  Value object(int depth) {
    Value v;
    v.kind = Kind::Object;
    ++pos_;
    if (eat('}')) return v;
    do {
      ws();
      if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a member name in quotes");
      std::string key = string();
      expect(':', "after a member name");
      v.members.push_back(Member{std::move(key), value(depth)});
    } while (eat(','));
    expect('}', "to close an object");
    return v;
  }

  Value array(int depth) {
    Value v;
    v.kind = Kind::Array;
    ++pos_;
    if (eat(']')) return v;
    do v.items.push_back(value(depth));
    while (eat(','));
    expect(']', "to close an array");
    return v;
  }

  unsigned hex4() {
    if (pos_ + 4 > s_.size()) fail("a \\u escape needs 4 hex digits");
    unsigned u = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = s_[pos_++];
      u <<= 4;
      if (h >= '0' && h <= '9') u |= static_cast<unsigned>(h - '0');
      else if (h >= 'a' && h <= 'f') u |= static_cast<unsigned>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') u |= static_cast<unsigned>(h - 'A' + 10);
      else fail("a \\u escape needs 4 hex digits");
    }
    return u;
  }

  static void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string string() {
    ++pos_;  // the opening quote
    std::string out;
    for (;;) {
      if (pos_ >= s_.size()) fail("unterminated string");
      if (out.size() > lim_.max_string) fail("a string longer than " + std::to_string(lim_.max_string) + " bytes");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("a control character inside a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) fail("unterminated string");
      const char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair
            if (!word("\\u")) fail("an unpaired surrogate in a \\u escape");
            const unsigned lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("an unpaired surrogate in a \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("an unpaired surrogate in a \\u escape");
          }
          utf8(out, cp);
          break;
        }
        default: fail("an unknown escape in a string");
      }
    }
  }

  Value num() {
    const size_t start = pos_;
    bool integral = true;
    if (s_[pos_] == '-') ++pos_;
    auto digits = [&] {
      const size_t d = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ - d;
    };
    const size_t lead = pos_;
    if (digits() == 0) fail("a number needs digits");
    if (s_[lead] == '0' && pos_ - lead > 1) fail("a number with a leading zero");
    if (pos_ < s_.size() && s_[pos_] == '.') {
      integral = false;
      ++pos_;
      if (digits() == 0) fail("a number needs digits after '.'");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      integral = false;
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (digits() == 0) fail("a number needs digits in its exponent");
    }
    if (pos_ - start > 400) fail("a number longer than 400 characters");
    const std::string text(s_.substr(start, pos_ - start));
    Value v;
    v.real = std::strtod(text.c_str(), nullptr);
    v.kind = Kind::Real;
    if (integral) {
      errno = 0;
      char* end = nullptr;
      const long long i = std::strtoll(text.c_str(), &end, 10);
      if (errno != ERANGE) {
        v.kind = Kind::Int;
        v.integer = i;
      }
    }
    return v;
  }

  std::string_view s_;
  const Limits& lim_;
  size_t pos_ = 0;
  size_t values_ = 0;
};

}  // namespace

Value parse(std::string_view text, const Limits& limits) { return Parser(text, limits).document(); }

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string number(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace kiln::jit::json

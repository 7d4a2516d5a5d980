// The JSON parser under our trace reader (json_parser.hpp).

#include "json_parser.hpp"

#include <fmt/format.h>

namespace nvtxpp::capture::json {

namespace {

constexpr int max_depth = 64;

}  // namespace

value const* value::get(std::string_view key) const {
  for (auto const& [k, v] : members) {
    if (k == key) {
      return &v;
    }
  }
  return nullptr;
}

std::string_view value::str(std::string_view key) const {
  auto const* v = get(key);
  return v != nullptr && v->t == type::string ? std::string_view{v->text} : std::string_view{};
}

void parser::fail(std::string_view what) const {
  if (p_ >= end_) {
    throw json_input_error(path_ + ": truncated JSON (" + std::string{what} + " at its end)");
  }
  throw json_input_error(
      fmt::format("{}: not valid JSON at byte {}: {}", path_, p_ - begin_, what));
}

void parser::ws() noexcept {
  while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) {
    ++p_;
  }
}

bool parser::peek(char c) {
  ws();
  return p_ < end_ && *p_ == c;
}

void parser::expect(char c) {
  ws();
  if (p_ >= end_ || *p_ != c) {
    fail(fmt::format("expected '{}'", c));
  }
  ++p_;
}

bool parser::comma() {
  if (peek(',')) {
    ++p_;
    return true;
  }
  return false;
}

bool parser::at_end() {
  ws();
  return p_ >= end_;
}

std::string parser::string() {
  expect('"');
  std::string out;
  for (;;) {
    if (p_ >= end_) {
      fail("unterminated string");
    }
    char const c = *p_++;
    if (c == '"') {
      return out;
    }
    if (static_cast<unsigned char>(c) < 0x20U) {
      fail("control character in a string");
    }
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (p_ >= end_) {
      fail("unterminated string");
    }
    char const e = *p_++;
    switch (e) {
      case '"':
      case '\\':
      case '/':
        out.push_back(e);
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u':
        unicode(out);
        break;
      default:
        fail("bad escape");
    }
  }
}

value parser::parse(int depth) {
  if (depth > max_depth) {
    fail("nested too deeply");
  }
  ws();
  if (p_ >= end_) {
    fail("expected a value");
  }
  value v;
  char const c = *p_;
  if (c == '{') {
    v.t = value::type::object;
    ++p_;
    if (!peek('}')) {
      do {
        auto key = string();
        expect(':');
        v.members.emplace_back(std::move(key), parse(depth + 1));
      } while (comma());
    }
    expect('}');
  } else if (c == '[') {
    v.t = value::type::array;
    ++p_;
    if (!peek(']')) {
      do {
        v.items.push_back(parse(depth + 1));
      } while (comma());
    }
    expect(']');
  } else if (c == '"') {
    v.t = value::type::string;
    v.text = string();
  } else if (c == '-' || (c >= '0' && c <= '9')) {
    v.t = value::type::number;
    v.text = number();
  } else if (word("true")) {
    v.t = value::type::boolean;
    v.b = true;
  } else if (word("false")) {
    v.t = value::type::boolean;
  } else if (!word("null")) {
    // A file cut inside a literal ("nu") is truncated, not malformed: say so.
    std::string_view const rest{p_, static_cast<std::size_t>(end_ - p_)};
    for (std::string_view const w : {"true", "false", "null"}) {
      if (rest.size() < w.size() && w.substr(0, rest.size()) == rest) {
        p_ = end_;
      }
    }
    fail("expected a value");
  }
  return v;
}

bool parser::word(std::string_view w) {
  if (static_cast<std::size_t>(end_ - p_) >= w.size() && std::string_view{p_, w.size()} == w) {
    p_ += w.size();
    return true;
  }
  return false;
}

std::string parser::number() {
  char const* const start = p_;
  auto digits = [&] {
    char const* const d = p_;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
      ++p_;
    }
    if (p_ == d) {
      fail("bad number");
    }
  };
  if (*p_ == '-') {
    ++p_;
  }
  digits();
  if (p_ < end_ && *p_ == '.') {
    ++p_;
    digits();
  }
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    ++p_;
    if (p_ < end_ && (*p_ == '+' || *p_ == '-')) {
      ++p_;
    }
    digits();
  }
  return std::string{start, p_};
}

unsigned parser::hex4() {
  if (end_ - p_ < 4) {
    fail("bad \\u escape");
  }
  unsigned v = 0;
  for (int i = 0; i < 4; ++i) {
    char const h = *p_++;
    v <<= 4U;
    if (h >= '0' && h <= '9') {
      v |= static_cast<unsigned>(h - '0');
    } else if (h >= 'a' && h <= 'f') {
      v |= static_cast<unsigned>(h - 'a' + 10);
    } else if (h >= 'A' && h <= 'F') {
      v |= static_cast<unsigned>(h - 'A' + 10);
    } else {
      fail("bad \\u escape");
    }
  }
  return v;
}

void parser::unicode(std::string& out) {
  unsigned cp = hex4();
  if (cp >= 0xD800U && cp <= 0xDBFFU && end_ - p_ >= 6 && p_[0] == '\\' && p_[1] == 'u') {
    p_ += 2;
    unsigned const lo = hex4();
    cp = lo >= 0xDC00U && lo <= 0xDFFFU ? 0x10000U + ((cp - 0xD800U) << 10U) + (lo - 0xDC00U)
                                        : 0xFFFDU;
  } else if (cp >= 0xD800U && cp <= 0xDFFFU) {
    cp = 0xFFFDU;
  }
  auto put = [&](unsigned x) { out.push_back(static_cast<char>(x)); };
  if (cp < 0x80U) {
    put(cp);
  } else if (cp < 0x800U) {
    put(0xC0U | (cp >> 6U));
    put(0x80U | (cp & 0x3FU));
  } else if (cp < 0x10000U) {
    put(0xE0U | (cp >> 12U));
    put(0x80U | ((cp >> 6U) & 0x3FU));
    put(0x80U | (cp & 0x3FU));
  } else {
    put(0xF0U | (cp >> 18U));
    put(0x80U | ((cp >> 12U) & 0x3FU));
    put(0x80U | ((cp >> 6U) & 0x3FU));
    put(0x80U | (cp & 0x3FU));
  }
}

}  // namespace nvtxpp::capture::json

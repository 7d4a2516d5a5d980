/// @file
/// @brief The function macros' range names, computed at compile time from the compiler's pretty
/// function name (`__PRETTY_FUNCTION__`).
///
/// g++, clang and nvcc (whose host code keeps its host compiler's spelling; its front end renames
/// anonymous namespaces `_GLOBAL__N_...`) write a function as
/// `[return type] qualified-name(parameters) [qualifiers] [template arguments]`, with a few
/// variations the parser knows: declarator parentheses around the name when the return type is a
/// function pointer or array reference (`void (* ns::get())(int)`), lambdas (g++
/// `ns::f()::<lambda(int)>`; clang `ns::f()::(anonymous class)::operator()(int) const`, newer
/// clang `$_0` or `(lambda at file:line:col)` for the class), anonymous namespaces
/// (`{anonymous}`, `(anonymous namespace)`, `_GLOBAL__N_...`), ABI tags (`[abi:cxx11]`) and the
/// template arguments (g++ `[with T = int; int N = 3]`, clang `[T = int, N = 3]`).
///
/// Styles (nvtxpp::function_name_style):
/// - bare: `__func__`, as it is.
/// - qualified: the scopes and the name, without return type, parameters, template arguments,
///   ABI tags or anonymous namespaces; a lambda is `<lambda>` after the function that holds it:
///   `ns::solver::run`, `ns::free_fn::<lambda>`.
/// - signature: qualified, plus the template arguments of the scopes, the parameter types, the
///   qualifiers and the function's template arguments, with one spelling for what g++ and clang
///   spell differently where that is cheap (`T*`, `T&`, `Ts...`, `>>`, `[T = int, N = 3]`):
///   `ns::solver::step(double) const`, `ns::f(T) [T = int]`, `ns::free_fn()::<lambda(int)>`.
/// Text the parser does not recognise as a function name gives `__func__`.
#pragma once

#include <nvtxpp/attributes.hpp>
#include <nvtxpp/config.hpp>

#include <cstddef>
#include <type_traits>

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {
namespace detail {

/// Where the parser writes: a buffer of `capacity` characters, or nowhere (`text == nullptr`)
/// when only the length is wanted. `size` counts what was written either way.
struct name_sink {
  char* text;
  std::size_t capacity;
  std::size_t size;

  constexpr void put(char c) noexcept {
    if (text != nullptr && size < capacity) {
      text[size] = c;
    }
    ++size;
  }
  /// Puts n characters; counting them costs no loop.
  constexpr void put(char const* s, std::size_t n) noexcept {
    if (text != nullptr) {
      for (std::size_t i = 0; i < n && size + i < capacity; ++i) {
        text[size + i] = s[i];
      }
    }
    size += n;
  }
  constexpr void put(char const* s) noexcept {
    for (; *s != '\0'; ++s) {
      put(*s);
    }
  }
};

/// Operator symbols after `operator`, longest first so that `->*` is not read as `->`.
inline constexpr char const* operator_symbols[] = {
    "()", "[]", "->*", "<=>", "<<=", ">>=", "->", "<<", ">>", "<=", ">=", "==", "!=",
    "&&", "||", "++",  "--",  "+=",  "-=",  "*=", "/=", "%=", "^=", "&=", "|=", "<",
    ">",  "+",  "-",   "*",   "/",   "%",   "^",  "&",  "|",  "~",  "!",  "=",  ","};

/// Words whose parenthesised operand belongs to a return type (`decltype(t + 1) ns::f(T)`).
struct keyword_text {
  char const* text;
  std::size_t length;
};
inline constexpr keyword_text operand_keywords[] = {
    {"decltype", 8},          {"__decltype", 10}, {"typeof", 6},
    {"__typeof", 8},          {"__typeof__", 10}, {"sizeof", 6},
    {"alignof", 7},           {"noexcept", 8},    {"__attribute__", 13},
    {"__underlying_type", 17}};

/// One pass over a pretty function name, writing the name in one style. (A template only so that
/// a file that includes it without annotating a function does not compile its members.)
template <typename Sink = name_sink>
class function_name_parser {
 public:
  constexpr function_name_parser(char const* pretty, std::size_t length, bool signature,
                                 Sink& out) noexcept
      : s_{pretty}, n_{length}, signature_{signature}, out_{&out} {}

  /// Writes the name; false when the text is not recognised (the sink then holds garbage).
  constexpr bool run() noexcept {
    std::size_t i = 0;
    while (i < n_) {
      char const c = s_[i];
      if (c == ':' && i + 1 < n_ && s_[i + 1] == ':') {
        separator_ = true;
        component_ = false;
        i += 2;
        continue;
      }
      if (!component_ && (c == '(' || c == '{' || c == '_' || c == '$')) {
        if (std::size_t const skip = anonymous_scope(i)) {  // dropped with its "::"
          i += skip;
          continue;
        }
        if (std::size_t const params = lambda_call_operator(i)) {  // clang's lambdas
          std::size_t const end = group_end(params);
          begin_component();
          if (signature_) {
            out_->put("<lambda");
            copy_type(params, end);
            out_->put('>');
          } else {
            out_->put("<lambda>");
          }
          i = end;
          if (starts(i, " const::")) {
            i += 6;  // a nested lambda's scope may keep its `const`
          }
          if (starts(i, "::")) {
            continue;  // it holds the function: a nested lambda
          }
          tail(i, true);
          return true;
        }
      }
      if (c == '(') {
        if (!component_) {
          if (starts(i, "(anonymous ") || starts(i, "(unnamed ") || starts(i, "(lambda at ")) {
            i = keep_component(i);  // clang's unnamed class: a scope like any other
          } else {
            reset();  // a declarator's parenthesis: `void (* ns::get())(int)`
            ++i;
          }
          continue;
        }
        std::size_t const end = group_end(i);
        if (word_end_ == i && is_operand_keyword(word_begin_, i)) {
          reset();
          i = end;
        } else if (starts(end, "::")) {
          // A function holding a local class or lambda: its parameters tell overloads apart.
          if (signature_) {
            copy_type(i, end);
          }
          i = end;
        } else {
          if (signature_) {
            copy_type(i, end);  // the parameter list: the name is complete
          }
          tail(end, false);
          return true;
        }
      } else if (c == '<') {
        if (!component_) {
          if (starts(i, "<lambda")) {  // g++'s lambda
            std::size_t const end = group_end(i);
            begin_component();
            if (signature_) {
              copy_type(i, end);
            } else {
              out_->put("<lambda>");
            }
            i = end;
            if (starts(i, "::")) {
              continue;
            }
            tail(i, true);
            return true;
          }
          i = keep_component(i);  // g++'s `<unnamed struct>`, clang's `<dependent type>`
          continue;
        }
        std::size_t const end = group_end(i);  // template arguments
        if (signature_) {
          copy_type(i, end);
        }
        i = end;
      } else if (c == '[') {
        std::size_t const end = group_end(i);
        if (!starts(i, "[abi:")) {
          reset();  // an array bound of a return type
        }
        i = end;
      } else if (c == '{') {
        i = keep_component(i);
      } else if (c == '~' || is_identifier(c)) {
        std::size_t const end = word_end(c == '~' ? i + 1 : i);
        begin_component();
        if (c == 'o' && equals(i, end, "operator")) {
          i = operator_name(end);
          continue;
        }
        copy_raw(i, end);
        word_begin_ = i;
        word_end_ = end;
        i = end;
      } else {
        // A space, '*', '&' or ')': the end of a return type or of a declarator, and the name
        // comes later; anything else unexpected also ends what came before.
        reset();
        ++i;
      }
    }
    return false;  // no parameter list and no lambda: not a function name we know
  }

 private:
  static constexpr bool is_identifier(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$';
  }

  [[nodiscard]] constexpr char at(std::size_t i) const noexcept { return i < n_ ? s_[i] : '\0'; }

  [[nodiscard]] constexpr bool starts(std::size_t i, char const* literal) const noexcept {
    for (; *literal != '\0'; ++literal, ++i) {
      if (at(i) != *literal) {
        return false;
      }
    }
    return true;
  }

  [[nodiscard]] constexpr bool equals(std::size_t from, std::size_t to,
                                      char const* literal) const noexcept {
    std::size_t length = 0;
    while (literal[length] != '\0') {
      ++length;
    }
    return to - from == length && starts(from, literal);
  }

  [[nodiscard]] constexpr std::size_t word_end(std::size_t i) const noexcept {
    char const* const s = s_;
    std::size_t const n = n_;
    while (i < n && is_identifier(s[i])) {
      ++i;
    }
    return i;
  }

  /// One past the bracket that closes the one at i. Angle brackets count only inside angle
  /// brackets (a `>` in parentheses is an operator); a closing bracket of another kind ends the
  /// group there, so text that is not balanced never reads past the end.
  [[nodiscard]] constexpr std::size_t group_end(std::size_t i) const noexcept {
    char const* const s = s_;
    std::size_t const n = n_;
    char const open = s[i];
    char const close = open == '(' ? ')' : open == '[' ? ']' : open == '{' ? '}' : '>';
    ++i;
    while (i < n) {
      char const c = s[i];
      if (c >= 'a' && c <= 'z') {  // most characters, and no bracket: one test
        ++i;
        continue;
      }
      if (c == close) {
        return i + 1;
      }
      if (c == '(' || c == '[' || c == '{' || (c == '<' && open == '<')) {
        i = group_end(i);
      } else if (c == ')' || c == ']' || c == '}') {
        return i;
      } else if (c == '-' && at(i + 1) == '>') {
        i += 2;  // `->` in a template argument is no bracket
      } else {
        ++i;
      }
    }
    return n;
  }

  /// The length of an anonymous namespace and its "::" at i, or 0.
  [[nodiscard]] constexpr std::size_t anonymous_scope(std::size_t i) const noexcept {
    char const c = at(i);
    if (c != '(' && c != '{' && c != '_') {
      return 0;  // the common case, without a comparison
    }
    std::size_t end = 0;
    if (starts(i, "(anonymous namespace)::")) {
      end = i + 21;
    } else if (starts(i, "{anonymous}::")) {
      end = i + 11;
    } else if (starts(i, "_GLOBAL__N_")) {  // nvcc's front end names them so in host code
      end = word_end(i);
      if (!starts(end, "::")) {
        return 0;
      }
    } else {
      return 0;
    }
    return end + 2 - i;
  }

  /// When a clang lambda's class (`(anonymous class)`, `(lambda at ...)`, `$_0`) followed by
  /// `::operator()` starts at i: the index of the call operator's parameter list; else 0.
  [[nodiscard]] constexpr std::size_t lambda_call_operator(std::size_t i) const noexcept {
    char const c = at(i);
    if (c != '(' && c != '$') {
      return 0;
    }
    std::size_t end = 0;
    if (starts(i, "(anonymous class)") || starts(i, "(lambda at ")) {
      end = group_end(i);
    } else if (starts(i, "$_")) {
      end = word_end(i);
    } else {
      return 0;
    }
    return starts(end, "::operator()(") ? end + 12 : 0;
  }

  [[nodiscard]] constexpr bool is_operand_keyword(std::size_t from, std::size_t to) const noexcept {
    // Every function name comes here: rule most out by their first character, the others by
    // their length, before comparing any text (constant evaluation is slow, g++'s above all).
    char const first = s_[from];
    if (first != 'd' && first != 't' && first != 's' && first != 'a' && first != 'n' &&
        first != '_') {
      return false;
    }
    for (keyword_text const& k : operand_keywords) {
      if (k.length == to - from && starts(from, k.text)) {
        return true;
      }
    }
    return false;
  }

  /// The name seen so far was part of a return type or declarator: start again.
  constexpr void reset() noexcept {
    out_->size = 0;
    separator_ = false;
    component_ = false;
    word_end_ = 0;
  }

  constexpr void begin_component() noexcept {
    if (separator_ && out_->size > 0) {
      out_->put("::", 2);
    }
    separator_ = false;
    component_ = true;
    word_end_ = 0;
  }

  /// A scope written as a bracketed group (an unnamed class): kept as it is.
  constexpr std::size_t keep_component(std::size_t i) noexcept {
    std::size_t const end = group_end(i);
    begin_component();
    copy_raw(i, end);
    return end;
  }

  constexpr void copy_raw(std::size_t from, std::size_t to) noexcept {
    if (to > n_) {
      to = n_;
    }
    if (from < to) {
      out_->put(s_ + from, to - from);
    }
  }

  /// Copies a type or a list of types: without anonymous namespaces and ABI tags, with `T*`,
  /// `T&`, `Ts...`, `>>` and `auto` spelt as g++ and clang do not both spell them (g++ numbers a
  /// generic lambda's `auto:8` after the other ones of the file, and of the standard's headers).
  constexpr void copy_type(std::size_t from, std::size_t to) noexcept {
    std::size_t i = from;
    while (i < to && i < n_) {
      char const c = s_[i];
      if ((c == '(' || c == '{' || c == '_') && (i == from || !is_identifier(s_[i - 1]))) {
        if (std::size_t const skip = anonymous_scope(i)) {
          i += skip;
          continue;
        }
      }
      if (c == '[' && starts(i, "[abi:")) {
        i = group_end(i);
        continue;
      }
      if (c == 'a' && starts(i, "auto:") && (i == from || !is_identifier(s_[i - 1]))) {
        out_->put("auto", 4);
        i = word_end(i + 5);
        continue;
      }
      if (c == ' ') {
        char const next = at(i + 1);
        if (next == '*' || next == '&' || starts(i + 1, "...") ||
            (next == '>' && i > from && s_[i - 1] == '>')) {
          ++i;
          continue;
        }
      }
      out_->put(c);
      ++i;
    }
  }

  /// Writes `operator` and its symbol, `new`/`delete` form or conversion type; returns the
  /// index after them.
  constexpr std::size_t operator_name(std::size_t i) noexcept {
    out_->put("operator");
    if (at(i) == ' ') {
      std::size_t const end = word_end(i + 1);
      if (equals(i + 1, end, "new") || equals(i + 1, end, "delete") ||
          equals(i + 1, end, "co_await")) {
        copy_raw(i, end);
        if (starts(end, "[]")) {
          out_->put("[]");
          return end + 2;
        }
        if (starts(end, " []")) {  // g++: `operator new []`
          out_->put("[]");
          return end + 3;
        }
        return end;
      }
      // A conversion: the type runs to the parameter list, the first parenthesised group no
      // other group follows (`operator void (*)(int)()`).
      std::size_t end_of_type = i + 1;
      while (end_of_type < n_) {
        char const c = s_[end_of_type];
        if (c == '(') {
          std::size_t const end_of_group = group_end(end_of_type);
          if (at(end_of_group) != '(') {
            break;
          }
          end_of_type = end_of_group;
        } else if (c == '<' || c == '[' || c == '{') {
          end_of_type = group_end(end_of_type);
        } else {
          ++end_of_type;
        }
      }
      copy_type(i, end_of_type);
      return end_of_type;
    }
    if (starts(i, "\"\"")) {  // a literal operator: `operator""_km`
      std::size_t const suffix = at(i + 2) == ' ' ? i + 3 : i + 2;
      std::size_t const end = word_end(suffix);
      out_->put("\"\"");
      copy_raw(suffix, end);
      return end;
    }
    for (char const* symbol : operator_symbols) {
      if (starts(i, symbol)) {
        out_->put(symbol);
        std::size_t length = 0;
        while (symbol[length] != '\0') {
          ++length;
        }
        return i + length;
      }
    }
    return i;
  }

  /// After the name (and, in the signature style, the parameters): the qualifiers and the
  /// template arguments, for the signature style.
  constexpr void tail(std::size_t i, bool lambda) noexcept {
    if (!signature_) {
      return;
    }
    // Qualifiers run to the end of a declarator group or to the template arguments.
    std::size_t end = i;
    while (end < n_ && s_[end] != ')' && !(s_[end] == ' ' && at(end + 1) == '[')) {
      ++end;
    }
    // A lambda's `const` (clang) or `mutable` (g++) tells no two rows apart.
    if (!lambda) {
      copy_raw(i, end);
    }
    while (end < n_) {
      char const c = s_[end];
      if (c == '[' && s_[end - 1] == ' ' && group_end(end) == n_ && s_[n_ - 1] == ']') {
        template_arguments(end + 1, n_ - 1);
        return;
      }
      end = (c == '(' || c == '[' || c == '{') ? group_end(end) : end + 1;
    }
  }

  /// g++'s `with T = int; int N = 3; Ts = {int, char}` or clang's `T = int, N = 3, Ts = <int,
  /// char>`, written `[T = int, N = 3, Ts = <int, char>]`. g++'s notes on typedefs
  /// (`std::string = ...`, `decltype (...) = int`) are left out.
  constexpr void template_arguments(std::size_t from, std::size_t to) noexcept {
    std::size_t i = starts(from, "with ") ? from + 5 : from;
    bool first = true;
    while (i < to) {
      std::size_t end = i;
      std::size_t equals_sign = to;
      std::size_t name = i;
      while (end < to && s_[end] != ';' && s_[end] != ',') {
        char const c = s_[end];
        if (c == '(' || c == '[' || c == '{' || c == '<') {
          end = group_end(end);
          continue;
        }
        if (equals_sign == to) {
          if (starts(end, " = ")) {
            equals_sign = end;
          } else if (c == ' ') {
            name = end + 1;  // g++ puts a non-type parameter's type first: `int N = 3`
          }
        }
        ++end;
      }
      if (equals_sign != to && is_parameter_name(name, equals_sign)) {
        out_->put(first ? " [" : ", ");
        first = false;
        if (has_colon(name, equals_sign)) {
          out_->put("auto", 4);  // g++'s `auto:8`, clang's `auto:1` or `x:auto`
        } else {
          copy_raw(name, equals_sign);
        }
        out_->put(" = ");
        std::size_t const value = equals_sign + 3;
        if (at(value) == '{' && end > value + 1 && s_[end - 1] == '}') {  // g++'s pack
          out_->put('<');
          copy_type(value + 1, end - 1);
          out_->put('>');
        } else {
          copy_type(value, end);
        }
      }
      i = end + 1;
      while (i < to && s_[i] == ' ') {
        ++i;
      }
    }
    if (!first) {
      out_->put(']');
    }
  }

  [[nodiscard]] constexpr bool has_colon(std::size_t from, std::size_t to) const noexcept {
    for (std::size_t i = from; i < to; ++i) {
      if (s_[i] == ':') {
        return true;
      }
    }
    return false;
  }

  /// A template parameter's name: `T`, `auto:1` (g++) or `a:auto` (clang); not a scoped typedef
  /// or an expression.
  [[nodiscard]] constexpr bool is_parameter_name(std::size_t from, std::size_t to) const noexcept {
    if (from == to) {
      return false;
    }
    for (std::size_t i = from; i < to; ++i) {
      bool const single_colon = s_[i] == ':' && at(i + 1) != ':' && (i == from || s_[i - 1] != ':');
      if (!is_identifier(s_[i]) && !single_colon) {
        return false;
      }
    }
    return true;
  }

  char const* s_;
  std::size_t n_;
  bool signature_;
  Sink* out_;
  bool separator_ = false;  // a "::" waits to be written before the next component
  bool component_ = false;  // the current component has begun
  // The last word written, to tell `decltype(...)` from a parameter list when a '(' follows it.
  std::size_t word_begin_ = 0;
  std::size_t word_end_ = 0;
};

/// The longest pretty names parsed in the signature and qualified styles. Constant evaluation is
/// bounded (clang stops one after 2^20 steps by default, g++ a loop after 2^18 iterations) and a
/// signature costs clang about 21 steps per character of the pretty name, a qualified name about
/// 5; the limits keep a third of that budget or less. A longer pretty name (a template over
/// many long types) gives the qualified name in the signature style, `__func__` in the
/// qualified one: never a build that stops.
inline constexpr std::size_t signature_parse_limit = 16384;
inline constexpr std::size_t qualified_parse_limit = 65536;

/// Writes the name of the function whose `__PRETTY_FUNCTION__` is pretty[0, pretty_length) and
/// whose `__func__` is func[0, func_length), in `style`.
template <typename Sink>
constexpr void write_function_name(Sink& out, function_name_style style, char const* pretty,
                                   std::size_t pretty_length, char const* func,
                                   std::size_t func_length) noexcept {
  if (style == function_name_style::signature && pretty_length > signature_parse_limit) {
    style = function_name_style::qualified;
  }
  if (style == function_name_style::qualified && pretty_length > qualified_parse_limit) {
    style = function_name_style::bare;
  }
  if (style != function_name_style::bare) {
    function_name_parser<Sink> parser{pretty, pretty_length,
                                      style == function_name_style::signature, out};
    if (parser.run() && out.size > 0) {
      return;
    }
  }
  out.size = 0;
  for (std::size_t i = 0; i < func_length; ++i) {
    out.put(func[i]);
  }
}

/// A function's name as parsed: NUL-terminated, `size` characters, in an array of N bytes (as
/// many as the longer of the texts it was parsed from).
template <std::size_t N>
struct parsed_function_name {
  char text[N];      ///< the name
  std::size_t size;  ///< its length
};

/// @return the name in `style` of the function whose `__PRETTY_FUNCTION__` is `pretty` and whose
/// `__func__` is `func`, parsed once. The array is as long as the longer text, the only size
/// known before parsing; exact_function_name() copies the name into one of its own size. Under
/// nvcc this array itself is the name: nvcc's front end sees pretty names of its own, so a size
/// it computed would not be that of the text the host compiler writes.
template <std::size_t P, std::size_t F>
constexpr parsed_function_name<(P > F ? P : F)> parse_function_name(
    function_name_style style, char const (&pretty)[P], char const (&func)[F]) noexcept {
  constexpr std::size_t capacity = P > F ? P : F;
  parsed_function_name<capacity> name{};
  name_sink sink{name.text, capacity - 1, 0};
  write_function_name(sink, style, pretty, P - 1, func, F - 1);
  name.size = sink.size < capacity - 1 ? sink.size : capacity - 1;
  // A return type seen before the name was written first: the name ends here.
  name.text[name.size] = '\0';
  return name;
}

/// A function's name, NUL-terminated, in N bytes: what a call site keeps.
template <std::size_t N>
struct function_name_text {
  char text[N];  ///< the name
};

/// @return `name` in an array of its own size: N is `name.size + 1`.
template <std::size_t N, std::size_t M>
constexpr function_name_text<N> exact_function_name(parsed_function_name<M> const& name) noexcept {
  function_name_text<N> exact{};
  for (std::size_t i = 0; i + 1 < N && i < M; ++i) {
    exact.text[i] = name.text[i];
  }
  return exact;
}

/// What a function macro's arguments say of its name style: `Choice` is the first argument's type
/// when that is one of nvtxpp::function_names, else void. Made in decltype from the arguments in
/// braces, which take the trailing comma the macros leave after them.
template <typename Choice>
struct function_name_probe {
  template <typename... As>
  constexpr explicit function_name_probe(As const&... /*arguments*/) noexcept {}

  /// @return the style the arguments chose, else `fallback` (the build's).
  static constexpr function_name_style style(function_name_style fallback) noexcept {
    if constexpr (std::is_void_v<Choice>) {
      return fallback;
    } else {
      return Choice::value;
    }
  }
};
template <function_name_style S, typename... As>
function_name_probe(function_name_choice<S> const&, As const&...)
    -> function_name_probe<function_name_choice<S>>;
template <typename... As>
function_name_probe(As const&...) -> function_name_probe<void>;

}  // namespace detail
}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp
